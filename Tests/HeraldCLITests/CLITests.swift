import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// The operator commands, run as the built `herald` binary against real PostgreSQL and RabbitMQ.
@Suite(.needsServices) struct CLITests {
    static let app = "com.example.news"

    static func token(_ n: Int) -> DeviceToken {
        let hex = String(n, radix: 16)
        return DeviceToken(trustedHex: "c1" + String(repeating: "0", count: 62 - hex.count) + hex)
    }

    @Test func keysCreatePrintsTheKeyOnceAsTheLastWordAndStoresOnlyItsHash() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let result = try await HeraldBinary.run([
                "keys", "create", "--app", Self.app, "--scope", "send", "--label", "backend", "--database-url", url,
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let key = try #require(result.stdout.split(whereSeparator: \.isWhitespace).last.map(String.init))
            #expect(key.hasPrefix("hk_"))
            let rows = try await store.client.query(
                "SELECT count(*)::bigint FROM api_keys WHERE key_hash = \(key) OR key_prefix = \(key) OR label = \(key)",
                logger: Logger(label: "t")
            )
            for try await n in rows.decode(Int64.self) { #expect(n == 0) }
            let listed = try await HeraldBinary.run(["keys", "list", "--app", Self.app, "--database-url", url])
            #expect(listed.stdout.contains(String(key.prefix(7))))
            #expect(!listed.stdout.contains(key))
            let keys = try await store.apiKeys(app: Self.app)
            #expect(keys.count == 1)
            #expect(keys.first?.label == "backend")
            let revoked = try await HeraldBinary.run(
                ["keys", "revoke", "--app", Self.app, "--id", String(keys[0].id), "--database-url", url]
            )
            #expect(revoked.status == 0)
            #expect(try await store.apiKeys(app: Self.app).first?.revoked == true)
        }
    }

    @Test func keysCreateStoresTheScopesAndRateGivenAndRefusesAnUnknownScope() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let made = try await HeraldBinary.run([
                "keys", "create", "--app", Self.app, "--scope", "register", "--scope", "read",
                "--requests-per-second", "5", "--database-url", url,
            ])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stdout.contains("scopes register,read"))
            let unknown = try await HeraldBinary.run([
                "keys", "create", "--app", Self.app, "--scope", "broadcast", "--database-url", url,
            ])
            #expect(unknown.status != 0)
            #expect(unknown.stderr.contains("--scope broadcast is not a scope; use register, send, read or admin"))
            // No scope is no longer an admin key: it is refused, saying why.
            let unscoped = try await HeraldBinary.run(["keys", "create", "--app", Self.app, "--database-url", url])
            #expect(unscoped.status != 0)
            #expect(unscoped.stderr.contains("--scope is required"))
            let keys = try await store.apiKeys(app: Self.app)
            #expect(keys.map(\.scopes) == [[.register, .read]])
            #expect(keys.first?.requestsPerSecond == 5)
            let listed = try await HeraldBinary.run(["keys", "list", "--app", Self.app, "--database-url", url])
            #expect(listed.stdout.contains("register,read") && listed.stdout.contains("5/s"))
        }
    }

    @Test func publishFromFlagsAndFromAFileSkipsBadLinesWithTheirNumbers() async throws {
        let logger = Logger(label: "test.cli")
        let prefix = TestServices.uniqueName("cli")
        let amqp = try AMQPConfiguration(url: TestServices.amqpURL)
        let connection = try await AMQPConnection.connect(amqp, logger: logger)
        _ = try await connection.declareQueue(prefix + ".jobs", durable: true)

        let single = try await HeraldBinary.run([
            "publish", "--app", Self.app, "--topic", "sports", "--title", "Goal!", "--alert", "2–1", "--badge", "2",
            "--sound", "default", "--id", "cli-1", "--queue-prefix", prefix, "--amqp-url", TestServices.amqpURL,
        ])
        #expect(single.status == 0, "\(single.stderr)")
        #expect(single.stdout.contains("published job cli-1"))

        let both = try await HeraldBinary.run([
            "publish", "--app", Self.app, "--topic", "a", "--all", "--alert", "x", "--queue-prefix", prefix,
            "--amqp-url", TestServices.amqpURL,
        ])
        #expect(both.status != 0)
        #expect(both.stderr.contains("exactly one"))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestServices.uniqueName("jobs") + ".jsonl")
        let secret = Self.token(77).hex
        try [
            #"{"id": "file-1", "app": "com.example.news", "target": {"all": true}, "notification": {"aps": {"alert": "a"}}}"#,
            "{not json",
            #"{"app": "com.example.news", "target": {"tokens": ["\#(secret)"]}, "notification": {"aps": {"alert": "hi"}, "priority": 3}}"#,
            "",
            #"{"id": "file-2", "target": {"users": ["u1"]}, "notification": {"aps": {"alert": "b"}}}"#,
        ].joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let many = try await HeraldBinary.run([
            "publish", "--file", file.path, "--app", Self.app, "--queue-prefix", prefix, "--amqp-url",
            TestServices.amqpURL,
        ])
        #expect(many.status == 0, "\(many.stderr)")
        #expect(many.stdout.contains("publish: 2 published, 2 rejected"))
        #expect(many.stderr.contains("line 2: malformed"))
        #expect(many.stderr.contains("line 3: invalid_notification"))
        #expect(!many.stderr.contains(secret))

        #expect(try await connection.queueMessageCount(prefix + ".jobs") == 3)
        let consumer = try await connection.consume(queue: prefix + ".jobs", prefetch: 10)
        var jobs: [String: Job] = [:]
        for try await delivery in consumer {
            let job = try JSONDecoder().decode(Job.self, from: Data(delivery.body))
            jobs[job.id ?? ""] = job
            try await consumer.ack(delivery)
            if jobs.count == 3 { break }
        }
        #expect(Set(jobs.keys) == ["cli-1", "file-1", "file-2"])
        #expect(jobs["cli-1"]?.target == .topic("sports"))
        #expect(jobs["cli-1"]?.notification.aps["badge"] == .integer(2))
        #expect(jobs["cli-1"]?.notification.aps["alert"] == .object(["title": "Goal!", "body": "2–1"]))
        #expect(jobs["file-2"]?.app == Self.app)
        try await connection.deleteQueue(prefix + ".jobs")
        await connection.close()
    }

    @Test func reportsListDeadTokensAndJobsInEveryFormat() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let logger = Logger(label: "t")
            for (n, reason) in [(1, "Unregistered"), (2, "Unregistered"), (3, "BadDeviceToken")] {
                try await store.client.query(
                    "INSERT INTO dead_tokens (app_id, token, reason, job_id) VALUES (\(Self.app), \(Self.token(n).hex), \(reason), 'job-9')",
                    logger: logger
                )
            }
            try await store.client.query(
                "INSERT INTO dead_tokens (app_id, token, reason, recorded_at) VALUES (\(Self.app), \(Self.token(4).hex), 'Unregistered', now() - interval '30 days')",
                logger: logger
            )
            let csv = try await HeraldBinary.run([
                "report", "dead-tokens", "--app", Self.app, "--since", "7d", "--format", "csv", "--database-url", url,
            ])
            #expect(csv.status == 0, "\(csv.stderr)")
            let lines = csv.stdout.split(separator: "\n")
            #expect(lines.first == "token,reason,apns_timestamp,job_id,recorded_at,platform,fcm_kind,endpoint_origin")
            #expect(lines.count == 4)
            #expect(!csv.stdout.contains(Self.token(4).hex))

            let json = try await HeraldBinary.run([
                "report", "dead-tokens", "--app", Self.app, "--since", "60d", "--format", "json", "--database-url", url,
            ])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(object?["total"] as? Int == 4)
            #expect(object?["by_reason"] as? [String: Int] == ["Unregistered": 3, "BadDeviceToken": 1])
            #expect((object?["by_day"] as? [Any])?.count == 2)

            let table = try await HeraldBinary.run(["report", "dead-tokens", "--app", Self.app, "--database-url", url])
            #expect(table.stdout.contains("total 3 pruned tokens"))
            #expect(table.stdout.contains("BadDeviceToken"))

            let prepared = try PreparedJob.prepare(
                Job(id: "job-9", app: Self.app, target: .all, notification: .init(aps: ["alert": "x"]))
            ) { "unused" }
            _ = try await store.enqueue(
                prepared, spec: String(decoding: try JSONEncoder().encode(prepared.spec), as: UTF8.self))
            let jobs = try await HeraldBinary.run([
                "report", "jobs", "--since", "1h", "--format", "json", "--database-url", url,
            ])
            #expect(jobs.status == 0, "\(jobs.stderr)")
            let rows = try JSONSerialization.jsonObject(with: Data(jobs.stdout.utf8)) as? [[String: Any]]
            #expect(rows?.first?["id"] as? String == "job-9")
            #expect(rows?.first?["state"] as? String == "queued")
            let jobsTable = try await HeraldBinary.run(["report", "jobs", "--database-url", url])
            #expect(jobsTable.stdout.contains("1 jobs: 1 queued"))
        }
    }

    @Test func jobsShowAndCancel() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let prepared = try PreparedJob.prepare(
                Job(
                    id: "later", app: Self.app, target: .all, notification: .init(aps: ["alert": "x"]),
                    sendAt: "2099-01-01T00:00:00Z")
            ) { "unused" }
            _ = try await store.enqueue(
                prepared, spec: String(decoding: try JSONEncoder().encode(prepared.spec), as: UTF8.self))
            let shown = try await HeraldBinary.run(["jobs", "show", "later", "--database-url", url])
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.contains("job later: app \(Self.app), scheduled"))
            let cancelled = try await HeraldBinary.run(["jobs", "cancel", "later", "--database-url", url])
            #expect(cancelled.stdout.contains("job later of app \(Self.app) cancelled (was scheduled)"))
            #expect(try await store.job(app: Self.app, id: "later")?.state == .cancelled)
            let again = try await HeraldBinary.run(["jobs", "cancel", "later", "--database-url", url])
            #expect(again.status != 0)
            #expect(again.stderr.contains("already cancelled"))
            let missing = try await HeraldBinary.run(["jobs", "show", "nope", "--database-url", url])
            #expect(missing.status != 0)
        }
    }

    @Test func devicesExportWritesTheImportFormatAndRoundTrips() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let devices = [
                DeviceRecord(
                    token: Self.token(1), userID: #"robert"); DROP TABLE devices;--"#, locale: "en-GB",
                    topics: ["a", "b"]),
                DeviceRecord(token: Self.token(2), userID: "plain, with comma", locale: nil, topics: []),
                DeviceRecord(token: Self.token(3)),
                DeviceRecord(
                    token: DeviceToken(trustedHex: "dIsVQ2QlSSyDRxQaO6LBcb"), userID: "android", platform: .android,
                    fcmKind: .fid),
                DeviceRecord(
                    token: DeviceToken(trustedHex: "eAnd-1:APA91bHun4MxP5egoKMwt2KZ"), topics: ["a"], platform: .android
                ),
            ]
            _ = try await store.importDevices(devices, app: Self.app)
            let exported = try await HeraldBinary.run([
                "devices", "export", "--app", Self.app, "--page-size", "2", "--database-url", url,
            ])
            #expect(exported.status == 0, "\(exported.stderr)")
            let lines = exported.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "token,user_id,locale,topics,platform,fcm_kind,p256dh,auth,expiration_time")
            #expect(lines.count == 6)
            #expect(lines[1].hasPrefix(Self.token(1).hex))
            #expect(lines[1].hasSuffix(",en-GB,a;b,ios,,,,"))
            #expect(lines.contains("dIsVQ2QlSSyDRxQaO6LBcb,android,,,android,fid,,,"))
            #expect(lines.contains("eAnd-1:APA91bHun4MxP5egoKMwt2KZ,,,a,android,token,,,"))

            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                TestServices.uniqueName("devices") + ".csv")
            try exported.stdout.write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let imported = try await HeraldBinary.run([
                "devices", "import", "--app", "copy", "--file", file.path, "--database-url", url,
            ])
            #expect(imported.status == 0, "\(imported.stderr)")
            for device in devices {
                let copy = try #require(try await store.device(app: "copy", token: device.token))
                #expect(copy.userID == device.userID)
                #expect(copy.locale == device.locale)
                #expect(copy.topics == device.topics)
                #expect(copy.platform == device.platform && copy.fcmKind == device.fcmKind)
            }
        }
    }

    @Test func devicesStaleListsOldAndroidDevicesAndPrunesThemAsStaleDeadTokens() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let url = HeraldBinary.databaseURL(database)
            let old = DeviceToken(trustedHex: "eAnd-1:APA91bHun4MxP5egoKMwt2KZ")
            let fresh = DeviceToken(trustedHex: "eAnd-2:APA91bHun4MxP5egoKMwt2KZ")
            _ = try await store.importDevices(
                [
                    DeviceRecord(token: old, userID: "u1", topics: ["a", "b"], platform: .android),
                    DeviceRecord(token: fresh, platform: .android),
                    DeviceRecord(token: Self.token(1)),
                ], app: Self.app)
            try await store.client.query(
                """
                UPDATE devices SET registered_at = now() - interval '45 days'
                WHERE app_id = \(Self.app) AND token = ANY(\([old.hex, Self.token(1).hex]))
                """,
                logger: Logger(label: "t"))

            let listed = try await HeraldBinary.run([
                "devices", "stale", "--app", Self.app, "--older-than", "30d", "--database-url", url,
            ])
            #expect(listed.status == 0, "\(listed.stderr)")
            let lines = listed.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "token,fcm_kind,user_id,locale,topics,registered_at")
            #expect(lines.count == 2)
            #expect(lines.last?.hasPrefix("\(old.hex),token,u1,,a;b,") == true)
            #expect(listed.stderr.contains("devices stale: 1 Android devices registered before"))
            #expect(try await store.deviceCount(app: Self.app) == 3)

            for bad in ["0d", "271d", "30 days", "9w"] {
                let refused = try await HeraldBinary.run([
                    "devices", "stale", "--app", Self.app, "--older-than", bad, "--database-url", url,
                ])
                #expect(refused.status != 0, "\(bad)")
                #expect(refused.stderr.contains("--older-than"), "\(bad): \(refused.stderr)")
            }

            let pruned = try await HeraldBinary.run([
                "devices", "stale", "--app", Self.app, "--older-than", "270d", "--prune", "--database-url", url,
            ])
            #expect(pruned.stdout.split(separator: "\n").count == 1, "not that old: nothing pruned")
            let prunedNow = try await HeraldBinary.run([
                "devices", "stale", "--app", Self.app, "--older-than", "30d", "--prune", "--page-size", "1",
                "--database-url", url,
            ])
            #expect(prunedNow.status == 0, "\(prunedNow.stderr)")
            #expect(prunedNow.stdout.split(separator: "\n").count == 2)
            #expect(prunedNow.stderr.contains("1 Android devices") && prunedNow.stderr.contains("pruned"))
            #expect(try await store.device(app: Self.app, token: old) == nil)
            #expect(try await store.deviceCount(app: Self.app) == 2)
            let report = try await store.deadTokenReport(app: Self.app, since: 0)
            #expect(report.records.map(\.token) == [old] && report.byReason == ["Stale": 1])
            #expect(report.records.first?.platform == .android)
        }
    }

    @Test func devicesImportAnalysesTheDevicesTableAsItsLastStep() async throws {
        try await TemporaryDatabase.withMigratedStore { store, database in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                TestServices.uniqueName("devices") + ".csv")
            let rows = (0..<300).map { "\(Self.token($0).hex),user-\($0 % 7),fr,news" }
            try (["token,user_id,locale,topics"] + rows).joined(separator: "\n").write(
                to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            #expect(try await Self.analysedDeviceRows(store) == nil)

            let imported = try await HeraldBinary.run([
                "devices", "import", "--app", Self.app, "--file", file.path, "--batch-size", "100",
                "--database-url", HeraldBinary.databaseURL(database), "--log-level", "debug",
            ])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stdout.contains("300 imported"))
            // Once, after the last batch: not per batch.
            #expect(imported.stderr.components(separatedBy: "analysed devices").count == 2, "\(imported.stderr)")
            #expect(try await Self.analysedDeviceRows(store) == 300)
        }
    }

    /// The devices table's row count as its statistics have it, or nil if it was never analysed.
    static func analysedDeviceRows(_ store: Store) async throws -> Int? {
        let rows = try await store.client.query(
            """
            SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_stats WHERE tablename = \("devices") AND attname = \("app_id"))
                        THEN reltuples::bigint END
            FROM pg_class WHERE oid = \("devices")::regclass
            """,
            logger: Logger(label: "test"))
        for try await count in rows.decode(Int?.self) { return count }
        return nil
    }
}
