import Foundation
import HeraldCommandLine
import Testing

/// Resolution over flags, `HERALD_*` variables, the configuration file and the defaults, in that order, for every
/// kind of key; and the sentences a bad value gets.
@Suite struct ConfigurationResolverTests {
    /// One key of each kind, with a flag's, a variable's and the file's text for it, and the values they mean.
    struct Layers: Sendable, CustomStringConvertible {
        var key: ConfigurationKey
        var flag: String
        var variable: String
        var file: String  // JSON
        var values: (flag: ConfigurationValue, variable: ConfigurationValue, file: ConfigurationValue)
        var description: String { key.name }
    }

    static let layers: [Layers] = [
        Layers(
            key: .prefetch, flag: "7", variable: "8", file: "9", values: (.integer(7), .integer(8), .integer(9))),
        Layers(
            key: .queuePrefix, flag: "f", variable: "e", file: "\"d\"", values: (.text("f"), .text("e"), .text("d"))),
        Layers(
            key: .pruneBreakerShare, flag: "0.25", variable: "0.75", file: "1",
            values: (.fraction(0.25), .fraction(0.75), .fraction(1))),
        Layers(
            key: .requestTimeout, flag: "250ms", variable: "30s", file: "\"2m\"",
            values: (.duration(.milliseconds(250)), .duration(.seconds(30)), .duration(.seconds(120)))),
        Layers(
            key: .retryDelays, flag: "1s,5s", variable: "2s,1m", file: "[\"3s\", \"1h\"]",
            values: (
                .durations([.seconds(1), .seconds(5)]), .durations([.seconds(2), .seconds(60)]),
                .durations([.seconds(3), .seconds(3600)])
            )),
        Layers(
            key: .amqpURL, flag: "amqp://a@flag/", variable: "amqp://a@env/", file: "\"amqps://a@file/\"",
            values: (.text("amqp://a@flag/"), .text("amqp://a@env/"), .text("amqps://a@file/"))),
        Layers(
            key: .queueType, flag: "quorum", variable: "classic", file: "\"quorum\"",
            values: (.text("quorum"), .text("classic"), .text("quorum"))),
        Layers(
            key: .parkedRetention, flag: "12h", variable: "0", file: "\"90d\"",
            values: (.period(.seconds(12 * 3600)), .period(nil), .period(.seconds(90 * 86_400)))),
        Layers(
            key: .finishedJobsRetention, flag: "30m", variable: "14d", file: "0",
            values: (.period(.seconds(30 * 60)), .period(.seconds(14 * 86_400)), .period(nil))),
        Layers(
            key: .retentionInterval, flag: "1d", variable: "90s", file: "\"2h\"",
            values: (.period(.seconds(86_400)), .period(.seconds(90)), .period(.seconds(7200)))),
    ]

    @Test(arguments: layers)
    func aFlagWinsOverTheEnvironmentWhichWinsOverTheFileWhichWinsOverTheDefault(_ layers: Layers) throws {
        try withFile("{\"\(layers.key.name)\": \(layers.file)}") { path in
            let key = layers.key
            let file = (path: path, origin: "--config")
            let environment = [key.environment: layers.variable]
            func resolve(flags: [ConfigurationKey: String], environment: [String: String], file: (String, String)?)
                throws -> ResolvedConfiguration.Entry
            {
                try ConfigurationResolver(flags: flags, environment: environment, file: file).resolve([key]).entry(key)
            }
            let all = try resolve(flags: [key: layers.flag], environment: environment, file: file)
            #expect(all.value == layers.values.flag && all.source == .flag(key.option))
            let noFlag = try resolve(flags: [:], environment: environment, file: file)
            #expect(noFlag.value == layers.values.variable && noFlag.source == .environment(key.environment))
            let fileOnly = try resolve(flags: [:], environment: [:], file: file)
            #expect(fileOnly.value == layers.values.file && fileOnly.source == .file(path))
            let nothing = try resolve(flags: [:], environment: [:], file: nil)
            #expect(nothing.value == key.defaultValue)
            #expect(nothing.source == (key.defaultValue == nil ? .unset : .defaultValue))
        }
    }

    @Test func todaysVariableNamesStillSetTheirKeys() throws {
        let environment = [
            "HERALD_AMQP_URL": "amqp://a/", "HERALD_DATABASE_URL": "postgres://d/", "HERALD_APPS_FILE": "apps.json",
            "HERALD_LOG_LEVEL": "debug", "HERALD_METRICS_HOST": "127.0.0.2", "HERALD_METRICS_PORT": "0",
            "HERALD_API_HOST": "0.0.0.0", "HERALD_API_PORT": "9000", "HERALD_SCHEMAS_DIR": "/app/schemas",
            "HERALD_FINISHED_JOBS_RETENTION": "0", "HERALD_DEAD_TOKENS_RETENTION": "180d",
            "HERALD_DELIVERY_FAILURES_RETENTION": "12h", "HERALD_PARKED_RETENTION": "30m",
            "HERALD_RETENTION_INTERVAL": "45s",
        ]
        let keys: [ConfigurationKey] = [
            .amqpURL, .databaseURL, .appsFile, .logLevel, .metricsHost, .metricsPort, .apiHost, .apiPort,
            .schemasDirectory, .finishedJobsRetention, .deadTokensRetention, .deliveryFailuresRetention,
            .parkedRetention, .retentionInterval,
        ]
        let resolved = try ConfigurationResolver(environment: environment, file: nil).resolve(keys)
        for key in keys {
            #expect(resolved.source(of: key) == .environment(key.environment))
            #expect(resolved.value(key)?.description == environment[key.environment])
        }
    }

    @Test(arguments: [
        (
            ["HERALD_WORKER_PREFETCH": "0"], [ConfigurationKey: String](), nil as String?,
            "worker.prefetch = 0 (from HERALD_WORKER_PREFETCH) must be a whole number from 1 to 65535"
        ),
        (
            ["HERALD_WORKER_PREFETCH": "many"], [:], nil,
            "worker.prefetch = many (from HERALD_WORKER_PREFETCH) must be a whole number from 1 to 65535"
        ),
        (
            [:], [.prefetch: "70000"], nil,
            "worker.prefetch = 70000 (from --prefetch) must be a whole number from 1 to 65535"
        ),
        (
            [:], [:], "{\"worker\": {\"prefetch\": \"lots\"}}",
            "worker.prefetch = \"lots\" (from the configuration file FILE) must be a whole number from 1 to 65535"
        ),
        (
            [:], [.requestTimeout: "10"], nil,
            "apns.request_timeout = 10 (from --request-timeout) must be a duration (250ms, 10s, 5m, 1h) from "
                + "100ms to 5m"
        ),
        (
            ["HERALD_QUEUE_RETRY_DELAYS": "10s,1s"], [:], nil,
            "queue.retry_delays = 10s,1s (from HERALD_QUEUE_RETRY_DELAYS) must be a comma-separated list of "
                + "increasing durations (250ms, 10s, 5m, 1h), each from 1s to 24h"
        ),
        (
            [:], [:], "{\"worker.prune_breaker_share\": 0}",
            "worker.prune_breaker_share = 0.0 (from the configuration file FILE) must be a number above 0 and at "
                + "most 1"
        ),
        (
            ["HERALD_QUEUE_TYPE": "stream"], [:], nil,
            "queue.type = stream (from HERALD_QUEUE_TYPE) must be classic or quorum"
        ),
        (
            ["HERALD_AMQP_URL": "http://herald:hunter2@host/"], [:], nil,
            "amqp.url = http://herald:***@host/ (from HERALD_AMQP_URL) must be a URL starting with amqp:// or amqps://"
        ),
        (
            ["HERALD_FINISHED_JOBS_RETENTION": "30s"], [:], nil,
            "retention.finished_jobs = 30s (from HERALD_FINISHED_JOBS_RETENTION) must be 0 (keep for ever) or a whole "
                + "number with a unit s, m, h or d (90d, 12h, 30m) from 1m to 3650d"
        ),
        (
            ["HERALD_DEAD_TOKENS_RETENTION": "90 days"], [:], nil,
            "retention.dead_tokens = 90 days (from HERALD_DEAD_TOKENS_RETENTION) must be 0 (keep for ever) or a whole "
                + "number with a unit s, m, h or d (90d, 12h, 30m) from 1m to 3650d"
        ),
        (
            [:], [.parkedRetention: "3651d"], nil,
            "retention.parked = 3651d (from --parked-retention) must be 0 (keep for ever) or a whole number with a "
                + "unit s, m, h or d (90d, 12h, 30m) from 1m to 3650d"
        ),
        (
            [:], [.retentionInterval: "0"], nil,
            "retention.interval = 0 (from --retention-interval) must be a whole number with a unit s, m, h or d "
                + "(90d, 12h, 30m) from 10s to 1d"
        ),
        (
            [:], [:], "{\"retention\": {\"delivery_failures\": 7}}",
            "retention.delivery_failures = 7 (from the configuration file FILE) must be 0 (keep for ever) or a "
                + "whole number with a unit s, m, h or d (90d, 12h, 30m) from 1m to 3650d"
        ),
        (
            [:], [:], "{\"retention.interval\": 0}",
            "retention.interval = 0 (from the configuration file FILE) must be a whole number with a unit s, m, h or "
                + "d (90d, 12h, 30m) from 10s to 1d"
        ),
        (
            [:], [:], "{\"worker\": {\"prefech\": 5}}",
            "the configuration file FILE sets worker.prefech, which is not a key of Herald's configuration; did you "
                + "mean worker.prefetch? (herald config docs lists them)"
        ),
        (
            [:], [:], "{\"worker\": {\"prefetch\": 5,}}",
            "the configuration file FILE (from --config) is not valid JSON: expected a string key at line 1, "
                + "column 27"
        ),
        (
            [:], [:], "[1, 2]",
            "the configuration file FILE (from --config) is not a JSON object of Herald's keys (herald config docs "
                + "lists them)"
        ),
    ])
    func aBadValueIsASentenceNamingTheKeyItsSourceAndTheRule(
        _ environment: [String: String], _ flags: [ConfigurationKey: String], _ file: String?, _ sentence: String
    ) throws {
        try withFile(file ?? "{}") { path in
            let resolver = ConfigurationResolver(
                flags: flags, environment: environment, file: file == nil ? nil : (path, "--config"))
            do {
                _ = try resolver.resolve(ConfigurationKey.all)
                Issue.record("no problem reported")
            } catch let error as ConfigurationProblems {
                #expect(error.sentences == [sentence.replacingOccurrences(of: "FILE", with: path)])
                #expect(!error.description.contains("hunter2"))
            }
        }
    }

    @Test func everyProblemIsReportedAtOnce() throws {
        let resolver = ConfigurationResolver(
            environment: ["HERALD_WORKER_PREFETCH": "0", "HERALD_API_PORT": "-1"], file: nil)
        #expect(
            throws: ConfigurationProblems([
                "worker.prefetch = 0 (from HERALD_WORKER_PREFETCH) must be a whole number from 1 to 65535",
                "api.port = -1 (from HERALD_API_PORT) must be a whole number from 0 to 65535",
                "amqp.url is not set: give --amqp-url, set HERALD_AMQP_URL, or set amqp.url in the configuration file",
            ])
        ) {
            try resolver.resolve([.prefetch, .apiPort, .amqpURL], required: [.amqpURL])
        }
    }

    @Test(arguments: [
        ("amqp://herald:herald-dev@127.0.0.1:56720/%2f", "amqp://herald:***@127.0.0.1:56720/%2f"),
        ("amqps://u:p%40ss@broker:5671/%2f?cacertfile=/ca.pem", "amqps://u:***@broker:5671/%2f?cacertfile=/ca.pem"),
        (
            "postgres://herald@db/herald?password=secret&sslmode=require",
            "postgres://herald@db/herald?password=***&sslmode=require"
        ),
        ("postgres://db/herald", "postgres://db/herald"),
        ("not a url with a secret", "***"),
    ])
    func aSecretURLIsShownWithoutItsPassword(_ url: String, _ shown: String) {
        #expect(ConfigurationValue.text(url).redacted(for: .databaseURL) == shown)
        #expect(ConfigurationValue.text(url).redacted(for: .queuePrefix) == url)
    }

    @Test func everyKeyHasItsOwnNameVariableAndFlagAndADefaultThatKeepsItsRule() {
        let keys = ConfigurationKey.all
        #expect(Set(keys.map(\.name)).count == keys.count)
        #expect(Set(keys.map(\.environment)).count == keys.count)
        #expect(Set(keys.map(\.flag)).count == keys.count)
        for key in keys {
            #expect(key.environment.hasPrefix("HERALD_"), "\(key.name)")
            #expect(!key.summary.isEmpty && !key.summary.contains("\n"), "\(key.name)")
            if let value = key.defaultValue {
                #expect(ConfigurationResolver(environment: [:], file: nil).resolve(key, value) == nil, "\(key.name)")
            }
        }
    }

    func withFile<T>(_ text: String, _ body: (String) throws -> T) throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).json")
            .path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try body(path)
    }
}

extension ConfigurationResolver {
    /// The problem a key's default would have, if any (resolving the key with nothing else set).
    fileprivate func resolve(_ key: ConfigurationKey, _ value: ConfigurationValue) -> String? {
        do {
            let resolved = try resolve([key])
            return resolved.value(key) == value ? nil : "resolved to \(String(describing: resolved.value(key)))"
        } catch {
            return error.description
        }
    }
}
