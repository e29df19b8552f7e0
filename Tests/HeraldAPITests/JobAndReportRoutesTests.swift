import APNSCore
import Foundation
import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Job status and cancellation, the dead-token report, and the open operational routes.
@Suite(.needsServices) struct JobAndReportRoutesTests {
    @Test func jobsCanBeReadAndCancelledOnceAndUnknownJobsAre404() async throws {
        try await APIHarness.run { h in
            let accepted = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/notifications", key: h.keyA,
                json:
                    #"{"target": {"all": true}, "send_at": "2099-01-01T00:00:00Z", "notification": {"aps": {"alert": "x"}}}"#
            )
            let id = try #require(accepted.object["id"] as? String)
            let cancelled = try await h.request(.delete, "/v1/jobs/\(id)", key: h.keyA)
            #expect(cancelled.status == .ok)
            #expect(cancelled.object["state"] as? String == "cancelled")
            #expect(cancelled.object["previous_state"] as? String == "scheduled")
            #expect(try await h.store.job(app: APIHarness.appA, id: id)?.state == .cancelled)
            let again = try await h.request(.delete, "/v1/jobs/\(id)", key: h.keyA)
            #expect(again.status == .conflict)
            #expect(again.errorCode == "job_finished")
            let shown = try await h.request(.get, "/v1/jobs/\(id)", key: h.keyA)
            #expect(shown.object["state"] as? String == "cancelled")
            #expect(try await h.request(.get, "/v1/jobs/no-such-job", key: h.keyA).status == .notFound)
            #expect(try await h.request(.delete, "/v1/jobs/no-such-job", key: h.keyA).status == .notFound)
        }
    }

    @Test func deadTokenReportListsRowsWithTotalsByReasonAndDay() async throws {
        try await APIHarness.run { h in
            let logger = Logger(label: "t")
            let rows: [(String, String, String, String)] = [
                (APIHarness.token(1), "Unregistered", "2026-11-20 10:00:00+00", "2026-11-20 11:00:00+00"),
                (APIHarness.token(2), "Unregistered", "2026-11-21 09:00:00+00", "2026-11-21 10:00:00+00"),
                (APIHarness.token(3), "BadDeviceToken", "", "2026-11-21 10:30:00+00"),
            ]
            for (token, reason, apns, recorded) in rows {
                let timestamp: String? = apns.isEmpty ? nil : apns
                try await h.store.client.query(
                    """
                    INSERT INTO dead_tokens (app_id, token, reason, apns_timestamp, job_id, recorded_at)
                    VALUES (\(APIHarness.appA), \(token), \(reason), \(timestamp)::timestamptz, 'job-1', \(recorded)::timestamptz)
                    """,
                    logger: logger
                )
            }
            // Another app's dead token never shows up.
            try await h.store.client.query(
                "INSERT INTO dead_tokens (app_id, token, reason) VALUES (\(APIHarness.appB), \(APIHarness.token(9)), 'Unregistered')",
                logger: logger
            )
            let base =
                "/v1/apps/\(APIHarness.appA)/reports/dead-tokens?since=2026-11-01T00:00:00Z&until=2026-12-01T00:00:00Z"
            let json = try await h.request(.get, base, key: h.keyA)
            #expect(json.status == .ok)
            #expect(json.object["total"] as? Int == 3)
            #expect(json.object["by_reason"] as? [String: Int] == ["Unregistered": 2, "BadDeviceToken": 1])
            let days = try #require(json.object["by_day"] as? [[String: Any]])
            #expect(days.map { $0["day"] as? String } == ["2026-11-20", "2026-11-21"])
            #expect(days.map { $0["count"] as? Int } == [1, 2])
            let listed = try #require(json.object["rows"] as? [[String: Any]])
            #expect(listed.count == 3)
            #expect(listed.first?["token"] as? String == APIHarness.token(3))
            #expect(listed.first?["job_id"] as? String == "job-1")
            #expect(listed.contains { $0["apns_timestamp"] as? String == "2026-11-21T09:00:00.000Z" })

            let csv = try await h.request(.get, base + "&format=csv", key: h.keyA)
            #expect(csv.status == .ok)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            let lines = csv.text.split(separator: "\n")
            #expect(lines.first == "token,reason,apns_timestamp,job_id,recorded_at,platform,fcm_kind,endpoint_origin")
            #expect(lines.count == 4)
            #expect(!csv.text.contains(APIHarness.token(9)))

            let narrow = try await h.request(
                .get, base.replacingOccurrences(of: "2026-11-01", with: "2026-11-21"), key: h.keyA)
            #expect(narrow.object["total"] as? Int == 2)
            let limited = try await h.request(.get, base + "&limit=1", key: h.keyA)
            #expect((limited.object["rows"] as? [Any])?.count == 1)
            #expect(limited.object["truncated"] as? Bool == true)

            for bad in ["?since=yesterday", "?format=xml", "?limit=-1"] {
                let response = try await h.request(
                    .get, "/v1/apps/\(APIHarness.appA)/reports/dead-tokens\(bad)", key: h.keyA)
                #expect(response.status == .badRequest)
                #expect(response.errorCode == "invalid_query")
            }
        }
    }

    @Test func healthAndMetricsNeedNoKey() async throws {
        try await APIHarness.run { h in
            let live = try await h.request(.get, "/health/live", key: nil)
            #expect(live.status == .ok)
            // Readiness gives each dependency a second or two: on a test machine running many suites at once, one
            // probe may miss it, so the test waits for the answer "ready" (a few probes at most).
            var ready = try await h.request(.get, "/health/ready", key: nil)
            for _ in 0..<10 where ready.status != .ok { ready = try await h.request(.get, "/health/ready", key: nil) }
            #expect(ready.status == .ok)
            #expect((ready.object["checks"] as? [String: Bool]) == ["postgres": true, "amqp": true])
            let metrics = try await h.request(.get, "/metrics", key: nil)
            #expect(metrics.status == .ok)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            let unknown = try await h.request(.get, "/v2/nothing", key: nil)
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "not_found")
        }
    }

    @Test func relativeAndAbsoluteTimesParse() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let week: Int64 = 1_000_000_000 - 7 * 86_400_000
        let minuteAndHalf: Int64 = 1_000_000_000 - 90_000
        #expect(TimeWindow.milliseconds("7d", now: now) == week)
        #expect(TimeWindow.milliseconds("90s", now: now) == minuteAndHalf)
        #expect(TimeWindow.milliseconds("1970-01-01T00:00:01Z", now: now) == 1000)
        #expect(TimeWindow.milliseconds("soon", now: now) == nil)
        #expect(TimeWindow.milliseconds("d", now: now) == nil)
    }
}
