import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import RabbitMQ

/// `herald bench …`: measurements on this machine (registered by the `herald` executable).
package struct BenchCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks against the real services.",
        subcommands: [
            BenchAMQPCommand.self, BenchPipelineCommand.self, BenchAPNSCommand.self, BenchFCMCommand.self,
            BenchWebPushCommand.self,
        ]
    )

    package init() {}
}

/// `herald bench amqp`: publish with confirms, consume with acks, then both at once; msgs/s and CPU µs per message
/// per phase.
///
/// `bench/amqp-baseline.c` does the same work with plain rabbitmq-c (same count, size, queue type and confirm
/// window) and prints the same JSON, as the broker's own limit on this machine: by default the best consumer
/// rabbitmq-c makes easy (prefetch 1000, one multiple ack every 500). Herald's consumer acks each delivery as the
/// worker does; its connection loop sends the acks of a turn as one multiple ack.
struct BenchAMQPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "amqp",
        abstract: "Publish N persistent messages with confirms, consume and ack them, then both at once."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "Messages per phase.")
    var count = 100_000

    @Option(help: "Body size in bytes.")
    var size = 300

    @Option(help: "Queue type: classic or quorum.")
    var queueType: String = "classic"

    @Option(help: "Consumer prefetch (basic.qos), as the worker's jobs consumer has it.")
    var prefetch: UInt16 = 1024

    @Option(help: "Publishes awaiting their confirm at once.")
    var confirmWindow = 1000

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func run() async throws {
        guard queueType == "classic" || queueType == "quorum" else {
            throw ValidationError("--queue-type must be classic or quorum")
        }
        guard count > 0, size >= 0, confirmWindow > 0 else {
            throw ValidationError("--count and --confirm-window must be positive")
        }
        let logger = services.makeLogger(label: "herald.bench")
        var configuration = try AMQPConfiguration(url: services.resolvedAMQPURL())
        configuration.maxUnconfirmedPublishes = confirmWindow
        configuration.connectionName = "herald-bench"
        let publisher = try await AMQPConnection.connect(configuration, logger: logger)
        let consumer = try await AMQPConnection.connect(configuration, logger: logger)
        var generator = SystemRandomNumberGenerator()  // a name, not chance
        let queue = "herald-bench-\(UInt32.random(in: 0...UInt32.max, using: &generator))"
        _ = try await publisher.declareQueue(queue, durable: true, arguments: ["x-queue-type": .string(queueType)])
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: size)

        let publishing = try await measure { try await publish(body, to: queue, on: publisher) }
        let consuming = try await measure { try await consume(queue, on: consumer) }
        let concurrent = try await measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await publish(body, to: queue, on: publisher) }
                group.addTask { try await consume(queue, on: consumer) }
                try await group.waitForAll()
            }
        }

        try await publisher.deleteQueue(queue)
        await consumer.close()
        await publisher.close()
        report(publish: publishing, consume: consuming, concurrent: concurrent)
    }

    /// `count` publishes from `confirmWindow` tasks, each waiting for its confirm before the next.
    private func publish(_ body: [UInt8], to queue: String, on connection: AMQPConnection) async throws {
        let workers = min(confirmWindow, count)
        try await withThrowingDiscardingTaskGroup { group in
            for worker in 0..<workers {
                group.addTask {
                    for _ in stride(from: worker, to: count, by: workers) {
                        try await connection.publish(body, routingKey: queue)
                    }
                }
            }
        }
    }

    /// Consumes and acks `count` messages, one `ack` per delivery, iterating on the connection's executor as the
    /// worker's consumers do.
    private func consume(_ queue: String, on connection: AMQPConnection) async throws {
        try await withTaskExecutorPreference(connection.executor) {
            let consumer = try await connection.consume(queue: queue, prefetch: prefetch)
            var received = 0
            for try await delivery in consumer {
                try await consumer.ack(delivery)
                received += 1
                if received == count { break }
            }
            try await consumer.cancel()
        }
    }

    /// A phase's rate (messages per second) and this process's CPU per message (µs, user plus system).
    struct Phase {
        var perSecond: Double
        var cpuMicroseconds: Double
    }

    private func measure(_ body: () async throws -> Void) async throws -> Phase {
        let clock = HeraldClock.system
        let (start, cpu) = (clock.now(), CPUTime.ofThisProcess())
        try await body()
        let elapsed = clock.now() - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Phase(
            perSecond: Double(count) / seconds, cpuMicroseconds: (CPUTime.ofThisProcess() - cpu) * 1e6 / Double(count))
    }

    private func report(publish: Phase, consume: Phase, concurrent: Phase) {
        func cpu(_ phase: Phase) -> String { String(format: "%.2f", phase.cpuMicroseconds) }
        if json {
            print(
                #"{"implementation":"swift","count":\#(count),"size":\#(size),"queue_type":"\#(queueType)","#
                    + #""prefetch":\#(prefetch),"confirm_window":\#(confirmWindow),"#
                    + #""publish_per_second":\#(Int(publish.perSecond)),"consume_per_second":\#(Int(consume.perSecond)),"#
                    + #""concurrent_per_second":\#(Int(concurrent.perSecond)),"#
                    + #""publish_cpu_us_per_message":\#(cpu(publish)),"consume_cpu_us_per_message":\#(cpu(consume)),"#
                    + #""concurrent_cpu_us_per_message":\#(cpu(concurrent))}"#)
        } else {
            print("\(count) × \(size) B, \(queueType) queue, prefetch \(prefetch), confirm window \(confirmWindow)")
            print("publish (confirmed):   \(Int(publish.perSecond)) msg/s, \(cpu(publish)) µs CPU/msg")
            print("consume (acked):       \(Int(consume.perSecond)) msg/s, \(cpu(consume)) µs CPU/msg")
            print("both at once:          \(Int(concurrent.perSecond)) msg/s, \(cpu(concurrent)) µs CPU/msg")
        }
    }
}
