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

    @Test func showListsTheRetentionKeysWithTheirSources() async throws {
        let result = try await HeraldBinary.run(
            ["config", "show", "--parked-retention", "0"],
            environment: ["HERALD_DEAD_TOKENS_RETENTION": "45d"],
            removing: [
                "HERALD_FINISHED_JOBS_RETENTION", "HERALD_DELIVERY_FAILURES_RETENTION", "HERALD_RETENTION_INTERVAL",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(rows.contains("retention.finished_jobs 7d default"), "\(result.stdout)")
        #expect(rows.contains("retention.dead_tokens 45d env HERALD_DEAD_TOKENS_RETENTION"), "\(result.stdout)")
        #expect(rows.contains("retention.delivery_failures 30d default"), "\(result.stdout)")
        #expect(rows.contains("retention.parked 0 flag --parked-retention"), "\(result.stdout)")
        #expect(rows.contains("retention.interval 5m default"), "\(result.stdout)")
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

    /// `herald doctor` and `herald parked` take the queue, apps file and schemas keys from the shared groups, so
    /// their values are checked and their absence named like every other command's.
    @Test(arguments: [
        (
            ["doctor", "--queue-type", "stream"], [:],
            "queue.type = stream (from --queue-type) must be classic or quorum"
        ),
        (
            ["doctor"], ["HERALD_QUEUE_RETRY_DELAYS": "10s,1s"],
            "queue.retry_delays = 10s,1s (from HERALD_QUEUE_RETRY_DELAYS) must be a comma-separated list"
        ),
        (
            ["parked", "list", "--queue-prefix", "p"], [:],
            "amqp.url is not set: give --amqp-url, set HERALD_AMQP_URL, or set amqp.url in the configuration file"
        ),
        (
            ["parked", "replay", "--amqp-url", "amqp://u:pw-secret@127.0.0.1:1/"], [:],
            "database.url is not set: give --database-url, set HERALD_DATABASE_URL, or set database.url in the "
                + "configuration file"
        ),
    ])
    func doctorAndParkedResolveTheSharedKeys(
        _ arguments: [String], _ environment: [String: String], _ sentence: String
    ) async throws {
        let result = try await HeraldBinary.run(
            arguments, environment: environment,
            removing: ["HERALD_AMQP_URL", "HERALD_DATABASE_URL", "HERALD_CONFIG_FILE", "HERALD_QUEUE_TYPE"])
        #expect(result.status != 0)
        #expect(result.stderr.contains(sentence), "\(result.stderr)")
        #expect(!result.stderr.contains("pw-secret") && !result.stdout.contains("pw-secret"))
    }
}
