import Foundation
import HeraldCommandLine
import Testing

/// `herald config show` and `herald config docs`: secrets redacted, sources named, the documentation current.
@Suite struct ConfigurationReportTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    @Test func theCommittedDocumentationIsWhatTheRegistryGenerates() throws {
        let committed = try String(contentsOfFile: Self.root + "/docs/configuration.md", encoding: .utf8)
        #expect(
            committed == ConfigurationReport.documentation(),
            "docs/configuration.md is stale: run `herald config docs > docs/configuration.md`")
    }

    @Test func theDocumentationListsEveryKeyWithItsVariableFlagAndDefault() {
        let text = ConfigurationReport.documentation()
        for key in ConfigurationKey.all {
            let row = text.split(separator: "\n").first { $0.hasPrefix("| `\(key.name)` |") }
            #expect(row?.contains("`\(key.environment)`") == true, "\(key.name)")
            #expect(row?.contains("`\(key.option)`") == true, "\(key.name)")
            #expect(row?.contains(key.defaultValue.map { "`\($0)`" } ?? "—") == true, "\(key.name)")
        }
    }

    @Test func showRedactsPasswordsAndNamesEachSource() throws {
        let resolver = ConfigurationResolver(
            flags: [.prefetch: "64"],
            environment: [
                "HERALD_AMQP_URL": "amqp://herald:s3cret-amqp@broker:5672/%2f",
                "HERALD_DATABASE_URL": "postgres://herald:s3cret-pg@db:5432/herald?sslmode=verify-full",
            ], file: nil)
        let resolved = try resolver.resolve(ConfigurationKey.all)
        for output in [ConfigurationReport.table(resolved), ConfigurationReport.json(resolved)] {
            #expect(!output.contains("s3cret"))
            #expect(output.contains("amqp://herald:***@broker:5672/%2f"))
            #expect(output.contains("postgres://herald:***@db:5432/herald?sslmode=verify-full"))
        }
        let lines = ConfigurationReport.table(resolved).split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("worker.prefetch ") && $0.hasSuffix("flag --prefetch") })
        #expect(lines.contains { $0.hasPrefix("amqp.url ") && $0.hasSuffix("env HERALD_AMQP_URL") })
        #expect(lines.contains { $0.hasPrefix("worker.batch_size ") && $0.hasSuffix("default") })
        #expect(lines.contains { $0.hasPrefix("apps.file ") && $0.hasSuffix("unset") })
        #expect(lines.count == ConfigurationKey.all.count + 1)

        let json =
            try JSONSerialization.jsonObject(with: Data(ConfigurationReport.json(resolved).utf8)) as? [String: Any]
        let keys = try #require(json?["keys"] as? [[String: Any]])
        #expect(keys.count == ConfigurationKey.all.count)
        let prefetch = try #require(keys.first { $0["key"] as? String == "worker.prefetch" })
        #expect(prefetch["value"] as? String == "64" && prefetch["source"] as? String == "flag")
    }
}
