import Foundation
import Testing

/// `herald config show` and the commands' configuration errors, as an operator sees them from the binary.
@Suite struct ConfigCommandTests {
    @Test func showPrintsEveryKeyWithItsSourceAndNoPassword() async throws {
        let result = try await HeraldBinary.run(
            ["config", "show", "--queue-type", "quorum"],
            environment: [
                "HERALD_AMQP_URL": "amqp://herald:pw-from-env@broker:5672/%2f",
                "HERALD_DATABASE_URL": "postgres://herald:pw-from-env@db/herald",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("pw-from-env") && !result.stderr.contains("pw-from-env"))
        #expect(result.stdout.contains("amqp://herald:***@broker:5672/%2f"))
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("queue.type ") && $0.hasSuffix("flag --queue-type") })
        #expect(lines.contains { $0.hasPrefix("database.url ") && $0.hasSuffix("env HERALD_DATABASE_URL") })
    }

    @Test func showReadsTheConfigurationFileBelowTheEnvironment() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).json")
            .path
        try #"{"worker": {"prefetch": 256, "batch_size": 500}, "amqp.url": "amqp://u:pw-in-file@h/"}"#.write(
            toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await HeraldBinary.run(
            ["config", "show", "--json", "--config", path], environment: ["HERALD_WORKER_BATCH_SIZE": "700"],
            removing: ["HERALD_AMQP_URL"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("pw-in-file"))
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let keys = try #require(json?["keys"] as? [[String: Any]])
        func entry(_ name: String) -> (String?, String?) {
            let found = keys.first { $0["key"] as? String == name }
            return (found?["value"] as? String, found?["source"] as? String)
        }
        #expect(entry("worker.prefetch") == ("256", "file"))
        #expect(entry("worker.batch_size") == ("700", "env"))
        #expect(entry("amqp.url") == ("amqp://u:***@h/", "file"))
        #expect(entry("worker.batch_prefetch") == ("4", "default"))
    }

    @Test func aBadValueStopsACommandWithOneSentence() async throws {
        let result = try await HeraldBinary.run(
            ["config", "show"], environment: ["HERALD_APNS_REQUEST_TIMEOUT": "ten seconds"])
        #expect(result.status != 0)
        #expect(
            result.stderr.contains(
                "apns.request_timeout = ten seconds (from HERALD_APNS_REQUEST_TIMEOUT) must be a duration"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("Usage"))
    }
}
