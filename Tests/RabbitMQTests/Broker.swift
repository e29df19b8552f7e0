import Foundation
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// The real RabbitMQ dev node (`deploy/dev/services.sh up`); these tests never mock it.
enum Broker {
    static let url =
        ProcessInfo.processInfo.environment["HERALD_TEST_AMQP_URL"]
        ?? "amqp://herald:herald-dev@127.0.0.1:56720/%2f"

    static let logger = Logger(label: "RabbitMQTests")

    static func configuration(name: String = #function) throws -> AMQPConfiguration {
        var configuration = try AMQPConfiguration(url: url)
        configuration.connectionName = "herald-tests-\(name)-\(UInt32.random(in: 0...UInt32.max))"
        return configuration
    }

    static func connect(name: String = #function) async throws -> AMQPConnection {
        try await AMQPConnection.connect(configuration(name: name), logger: logger)
    }

    /// A queue name no other test (or engineer) uses.
    static func uniqueQueue(_ label: String = #function) -> String {
        let clean = label.filter { $0.isLetter || $0.isNumber }
        return "herald-test-\(clean)-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// Asks the broker (through rabbitmqctl) to close the connection with this connection_name, as an
    /// operator or a node shutdown would: connection.close with reply code 320.
    static func forceClose(connectionNamed name: String) throws {
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = root.appendingPathComponent("deploy/dev/services.sh").path
        let list = try run(
            script,
            [
                "rabbitmqctl", "-q", "list_connections", "--no-table-headers", "pid",
                "client_properties",
            ])
        let line = try #require(
            list.split(separator: "\n").first { $0.contains(name) }, "connection \(name) not found in: \(list)")
        let pid = try #require(line.split(separator: "\t").first.map(String.init))
        _ = try run(script, ["rabbitmqctl", "-q", "close_connection", pid, "herald test: forced close"])
    }

    /// The broker's count of `queue`'s deliveries that no consumer has acknowledged yet (rabbitmqctl), nil if the
    /// listing does not have it; waits without blocking a cooperative thread.
    static func unacknowledged(in queue: String) async throws -> Int? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else { return nil }
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            servicesScript, "rabbitmqctl", "-q", "list_queues", "--no-table-headers", "name", "messages_unacknowledged",
        ]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        guard try await process.exitStatus() == 0 else { return nil }
        for line in try String(contentsOf: output, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count == 2, fields[0] == queue { return Int(fields[1]) }
        }
        return nil
    }

    /// Restarts the dev broker (`deploy/dev/services.sh restart-rabbitmq`) and returns the script's exit status
    /// once the node is up again; waits without blocking a cooperative thread.
    static func restart() async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [servicesScript, "restart-rabbitmq"]
        process.standardOutput = FileHandle.nullDevice
        return try await process.exitStatus()
    }

    static var servicesScript: String {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/dev/services.sh").path
    }

    private static func run(_ script: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

struct TimedOut: Error {}

extension Tag {
    /// Tests that restart the shared dev broker: `make test` runs them in an invocation of their own, after the
    /// others, because a restart cuts every connection to the node.
    @Tag static var brokerRestart: Self
}

/// Fails instead of hanging when an awaited event never happens; the limit is a guard, not a wait.
func withTimeout<T: Sendable>(
    _ limit: Duration = .seconds(15),
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw TimedOut()
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

extension AMQPConnection {
    /// Publishes `count` messages to `queue`, message `n`'s body the one byte `n` (truncated), in batches of 500.
    func publishNumbered(_ count: Int, to queue: String) async throws {
        for start in stride(from: 0, to: count, by: 500) {
            try await publish(
                contentsOf: (start..<min(count, start + 500)).map {
                    ([UInt8(truncatingIfNeeded: $0)], AMQPProperties())
                },
                routingKey: queue)
        }
    }

    /// Waits until `queue` has ready messages (a closed channel's unacknowledged ones come back all at once) and
    /// returns how many; fails after 15 s.
    func waitForReadyMessages(in queue: String) async throws -> UInt32 {
        try await withTimeout(.seconds(15)) {
            while true {
                let count = try await self.queueMessageCount(queue)
                if count > 0 { return count }
                try Task.checkCancellation()
                await Task.yield()
            }
        }
    }
}

extension AMQPConsumer {
    /// The next delivery, failing the test if the iteration ends or nothing arrives in time.
    func nextDelivery(_ limit: Duration = .seconds(15)) async throws -> AMQPDelivery {
        let delivery = try await withTimeout(limit) {
            var iterator = self.makeAsyncIterator()
            return try await iterator.next()
        }
        return try #require(delivery)
    }
}
