import Foundation
import HeraldMessaging
import HeraldStore
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// Every shell example of README.md and docs/ either runs or says it does not: a fenced ```sh block runs here, with
/// `bash -e -o pipefail`, against the dev services; one that needs what a test cannot give (Apple, a long benchmark,
/// a placeholder such as `<id>`) is fenced ```sh illustrative. A drifting example (a flag renamed, a route moved, a
/// key without the scope a route needs, with `curl -f`) fails here.
///
/// Each block runs in a sandbox laid out like the repository after `make demo`: `.state/services.env` naming a fresh
/// database and a queue prefix of its own, `.state/demo/` with test credentials, `.build/debug/herald` and `herald`
/// on the `PATH` as the built binary. Its background processes are stopped with it.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(3))) struct DocExamplesTests {
    struct Block: Sendable, CustomTestStringConvertible {
        var file: String
        var line: Int
        var text: String
        var runs: Bool
        var testDescription: String { "\(file):\(line)" }
    }

    /// The files whose examples are held to this.
    static let files = ["README.md"] + documents()

    static func documents() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: TestServices.repositoryRoot + "/docs")) ?? []
        return names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// The fenced shell blocks of `file`: ```sh (runs) and ```sh illustrative (does not).
    static func blocks(in file: String) -> [Block] {
        guard let text = try? String(contentsOfFile: TestServices.repositoryRoot + "/" + file, encoding: .utf8)
        else { return [] }
        var blocks: [Block] = []
        var current: Block?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if var block = current {
                if line == "```" {
                    blocks.append(block)
                    current = nil
                } else {
                    block.text += line + "\n"
                    current = block
                }
            } else if line == "```sh" || line == "```sh illustrative" {
                current = Block(file: file, line: index + 1, text: "", runs: line == "```sh")
            } else if line.hasPrefix("```") && line.count > 3 {
                // Another fenced block: skip to its end so that a ``` inside it is not taken for a shell block.
                current = nil
            }
        }
        return blocks
    }

    static let runnable = files.flatMap(blocks(in:)).filter(\.runs)

    @Test func theDocsHaveShellExamplesAndTheFirstJobOfTheREADMERuns() {
        #expect(Self.files.flatMap(Self.blocks(in:)).count > 10)
        #expect(Self.runnable.contains { $0.file == "README.md" && $0.text.contains("publish") })
        // Only sh blocks are run: a shell example in another fence would escape the check.
        for file in Self.files {
            let text = (try? String(contentsOfFile: TestServices.repositoryRoot + "/" + file, encoding: .utf8)) ?? ""
            for fence in ["```bash", "```shell", "```console"] { #expect(!text.contains(fence), "\(file): \(fence)") }
        }
    }

    @Test(arguments: runnable)
    func aShellExampleRuns(_ block: Block) async throws {
        try await TemporaryDatabase.withMigratedStore { _, database in
            let sandbox = try Sandbox(database: database)
            defer { sandbox.remove() }
            let (status, output) = try await sandbox.run(block.text)
            #expect(status == 0, "\(block.file):\(block.line) exited \(status):\n\(output)")
            // The queues a worker or the API declared under the sandbox's prefix.
            let connection = try await AMQPConnection.connect(
                try AMQPConfiguration(url: TestServices.amqpURL), logger: Logger(label: "test.docs"))
            try? await Topology(prefix: sandbox.prefix).delete(on: connection)
            await connection.close()
        }
    }
}

/// A directory laid out like the repository after `make demo`, for one block.
struct Sandbox {
    let root: String
    let prefix = TestServices.uniqueName("docs")
    let environment: [String: String]

    init(database: DatabaseConfiguration) throws {
        root =
            FileManager.default.temporaryDirectory.appendingPathComponent(TestServices.uniqueName("herald-docs"))
            .path
        let manager = FileManager.default
        for directory in [".state/demo", ".build/debug", "bin"] {
            try manager.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
        let services = [
            "HERALD_AMQP_URL": TestServices.amqpURL, "HERALD_DATABASE_URL": database.url, "HERALD_QUEUE_PREFIX": prefix,
        ]
        try services.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
            .write(toFile: root + "/.state/services.env", atomically: true, encoding: .utf8)
        let demo = root + "/.state/demo/"
        for (name, text) in [
            ("ca.pem", TestCredentials.caCertificatePEM), ("server.pem", TestCredentials.serverCertificatePEM),
            ("server.key", TestCredentials.serverPrivateKeyPEM),
            ("AuthKey_DEMOKEY123.p8", TestCredentials.providerKeyPEM),
        ] {
            try text.write(toFile: demo + name, atomically: true, encoding: .utf8)
        }
        let herald = WorkerHarness.heraldExecutable
        try manager.createSymbolicLink(atPath: root + "/.build/debug/herald", withDestinationPath: herald)
        try manager.createSymbolicLink(atPath: root + "/bin/herald", withDestinationPath: herald)
        try manager.createSymbolicLink(atPath: root + "/schemas", withDestinationPath: TestServices.schemasDirectory)
        var environment = ProcessInfo.processInfo.environment
        environment.merge(services) { _, sandbox in sandbox }
        environment["PATH"] = root + "/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["HERALD_LOG_LEVEL"] = "warning"
        environment["HERALD_APPS_FILE"] = nil
        environment["HERALD_CONFIG_FILE"] = nil
        self.environment = environment
    }

    /// Runs `script` with `bash -e -o pipefail` from the sandbox's root; whatever it started in the background and
    /// left running is stopped, and waited for, when it ends (a server holding database connections would keep its
    /// database from being dropped, and the shell's exit is only seen once every process holding its output has
    /// gone). Its exit status and its output (stdout and stderr together).
    func run(_ script: String) async throws -> (Int32, String) {
        let output = root + "/output.log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let cleanUp = "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT\n"
        process.arguments = ["-e", "-o", "pipefail", "-c", cleanUp + script]
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        process.environment = environment
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await process.exitStatus()
        try? handle.close()
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: root)
    }
}
