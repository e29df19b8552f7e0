import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import RabbitMQ
import Testing

/// Enqueueing through the API: validation as the worker does it, publish with confirm, the Idempotency-Key.
@Suite(.needsServices) struct NotificationRoutesTests {
    static let uri = "/v1/apps/\(APIHarness.appA)/notifications"

    /// The next message on the test's jobs queue.
    static func nextJob(_ h: APIHarness) async throws -> AMQPDelivery {
        let connection = try await AMQPConnection.connect(h.configuration.amqp, logger: Logger(label: "test"))
        let consumer = try await connection.consume(queue: h.configuration.topology.jobs, prefetch: 1)
        var received: AMQPDelivery? = nil
        for try await delivery in consumer {
            try await consumer.ack(delivery)
            received = delivery
            break
        }
        await connection.close()
        return try #require(received)
    }

    @Test func aValidJobIsPublishedWithAConfirmAndTheIdempotencyKeyIsItsId() async throws {
        try await APIHarness.run { h in
            let body =
                #"{"target": {"tokens": ["\#(APIHarness.token(1))", "nope"]}, "notification": {"aps": {"alert": {"title": "Goal!", "body": "2–1"}}, "custom": {"match": 42}}}"#
            let key: HTTPFields = [.init("Idempotency-Key")!: "order-42"]
            let accepted = try await h.request(.post, Self.uri, key: h.keyA, json: body, headers: key)
            #expect(accepted.status == .accepted)
            #expect(accepted.object["id"] as? String == "order-42")
            #expect(accepted.object["state"] as? String == "queued")
            #expect(accepted.object["duplicate"] as? Bool == false)
            #expect(accepted.object["invalid_tokens"] as? Int == 1)

            let delivery = try await Self.nextJob(h)
            #expect(delivery.properties.messageID == "order-42")
            #expect(delivery.properties.contentType == "application/json")
            let job = try JSONDecoder().decode(Job.self, from: Data(delivery.body))
            #expect(job.id == "order-42")
            #expect(job.app == APIHarness.appA)

            let status = try await h.request(.get, "/v1/jobs/order-42", key: h.keyA)
            #expect(status.status == .ok)
            #expect(status.object["state"] as? String == "queued")
            #expect(status.object["target_kind"] as? String == "tokens")
            #expect((status.object["counters"] as? [String: Any])?["sent"] as? Int == 0)

            // The same request again: the same id, nothing new stored.
            let again = try await h.request(.post, Self.uri, key: h.keyA, json: body, headers: key)
            #expect(again.status == .ok)
            #expect(again.object["id"] as? String == "order-42")
            #expect(again.object["duplicate"] as? Bool == true)
            #expect(try await h.store.jobSummaries(since: 0).count == 1)

            // The same key for a different request is a conflict.
            let different = try await h.request(
                .post, Self.uri, key: h.keyA,
                json: #"{"target": {"all": true}, "notification": {"aps": {"alert": "other"}}}"#, headers: key
            )
            #expect(different.status == .conflict)
            #expect(different.errorCode == "idempotency_conflict")
            // Ids are scoped by app: another app's same key is a job of its own.
            let otherApp = try await h.request(
                .post, "/v1/apps/\(APIHarness.appB)/notifications", key: h.keyB, json: body, headers: key
            )
            #expect(otherApp.status == .accepted)
            #expect(otherApp.object["duplicate"] as? Bool == false)
            #expect(try await h.store.job(app: APIHarness.appB, id: "order-42")?.state == .queued)
        }
    }

    @Test func concurrentRequestsWithOneIdempotencyKeyPublishOnceAndTheRepeatsAre200() async throws {
        try await APIHarness.run { h in
            let body = #"{"target": {"topic": "sports"}, "notification": {"aps": {"alert": "once"}}}"#
            let key: HTTPFields = [.init("Idempotency-Key")!: "once-1"]
            let statuses = try await withThrowingTaskGroup(of: (Int, Bool?).self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        let response = try await h.request(.post, Self.uri, key: h.keyA, json: body, headers: key)
                        #expect(response.object["id"] as? String == "once-1")
                        return (response.status.code, response.object["duplicate"] as? Bool)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == (202, false) }.count == 1)
            #expect(statuses.filter { $0 == (200, true) }.count == 2)
            // One message reached the broker: only the request that created the job published it.
            let connection = try await AMQPConnection.connect(h.configuration.amqp, logger: Logger(label: "test"))
            let queued = try await connection.queueMessageCount(h.configuration.topology.jobs)
            await connection.close()
            #expect(queued == 1)
            // A later repeat publishes nothing either.
            let later = try await h.request(.post, Self.uri, key: h.keyA, json: body, headers: key)
            #expect(later.status == .ok)
            let again = try await AMQPConnection.connect(h.configuration.amqp, logger: Logger(label: "test"))
            #expect(try await again.queueMessageCount(h.configuration.topology.jobs) == 1)
            await again.close()
        }
    }

    /// An API that died between its insert and its publish leaves the row awaiting its publish: the client's retry
    /// with the same key publishes it (once, however many retries) instead of answering "duplicate" with nothing
    /// queued (issue 32).
    @Test func aRetryOfAJobWhoseRequestDiedBeforePublishingPublishesItOnce() async throws {
        try await APIHarness.run {
            $0.unpublishedJobGrace = .zero
        } _: { h in
            let body = #"{"target": {"topic": "sports"}, "notification": {"aps": {"alert": "late"}}}"#
            let key: HTTPFields = [.init("Idempotency-Key")!: "died-1"]
            #expect(try await h.request(.post, Self.uri, key: h.keyA, json: body, headers: key).status == .accepted)
            _ = try await Self.nextJob(h)
            // What the row looks like when its request died after the insert: queued, its message never sent.
            try await h.store.client.query(
                "UPDATE jobs SET awaiting_publish = true WHERE id = 'died-1'", logger: Logger(label: "test"))

            for _ in 0..<3 {
                let retry = try await h.request(.post, Self.uri, key: h.keyA, json: body, headers: key)
                #expect(retry.status == .ok)
                #expect(retry.object["duplicate"] as? Bool == true)
            }
            let connection = try await AMQPConnection.connect(h.configuration.amqp, logger: Logger(label: "test"))
            #expect(try await connection.queueMessageCount(h.configuration.topology.jobs) == 1)
            await connection.close()
            let delivery = try await Self.nextJob(h)
            #expect(delivery.properties.messageID == "died-1")
        }
    }

    @Test func withoutAKeyEachRequestGetsANewIdAndScheduledJobsSaySo() async throws {
        try await APIHarness.run { h in
            let body = #"{"target": {"topic": "sports"}, "notification": {"aps": {"alert": "x"}}}"#
            let first = try await h.request(.post, Self.uri, key: h.keyA, json: body)
            let second = try await h.request(.post, Self.uri, key: h.keyA, json: body)
            let a = try #require(first.object["id"] as? String)
            let b = try #require(second.object["id"] as? String)
            #expect(a != b)
            let later = try await h.request(
                .post, Self.uri, key: h.keyA,
                json:
                    #"{"target": {"all": true}, "send_at": "2099-01-01T00:00:00Z", "notification": {"aps": {"alert": "x"}}}"#
            )
            #expect(later.object["state"] as? String == "scheduled")
        }
    }

    @Test(arguments: [
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "x"}, "priority": 3}}"#, 422,
            "invalid_notification"
        ),
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "hi"}, "push_type": "background", "priority": 10}}"#,
            422,
            "invalid_notification"
        ),
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "x"}, "collapse_id": "\#(String(repeating: "c", count: 65))"}}"#,
            422, "invalid_notification"
        ),
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "\#(String(repeating: "x", count: 5000))"}}}"#,
            422, "invalid_notification"
        ),
        (#"{"target": {"tokens": []}, "notification": {"aps": {"alert": "x"}}}"#, 422, "invalid_target"),
        (#"{"target": {"all": true, "topic": "x"}, "notification": {"aps": {"alert": "hi"}}}"#, 400, "malformed"),
        (#"{"target": {"all": true}}"#, 400, "malformed"),
        (
            #"{"app": "com.other", "target": {"all": true}, "notification": {"aps": {"alert": "hi"}}}"#, 400,
            "app_mismatch"
        ),
        // Values the database or a header would refuse: 422 naming the rule, never a 500.
        (
            #"{"target": {"all": true}, "throttle_per_second": 2147483648, "notification": {"aps": {"alert": "hi"}}}"#,
            422,
            "out_of_bounds"
        ),
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "hi"}, "badge_increment": 2147483648}}"#, 422,
            "out_of_bounds"
        ),
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "hi"}, "expiration": -1}}"#, 422,
            "out_of_bounds"
        ),
        (
            #"{"target": {"all": true, "locales": ["%"]}, "notification": {"aps": {"alert": "hi"}}}"#, 422,
            "out_of_bounds"
        ),
        (
            #"{"target": {"all": true}, "notification": {"aps": {"alert": "hi"}, "collapse_id": "a\r\nb"}}"#, 422,
            "invalid_notification"
        ),
        (#"{"target": {"all": true}, "notification": {"aps": {"x": 1e400}}}"#, 400, "malformed_json"),
        (#"[1, 2]"#, 400, "malformed_json"),
        (#"{"target": "#, 400, "malformed_json"),
    ])
    func invalidJobsAreRejectedAndNothingIsStoredOrPublished(body: String, status: Int, code: String) async throws {
        try await APIHarness.run { h in
            let response = try await h.request(.post, Self.uri, key: h.keyA, json: body)
            #expect(response.status.code == status)
            #expect(response.errorCode == code)
            #expect(try await h.store.jobSummaries(since: 0).isEmpty)
        }
    }

    @Test func anOversizeRequestIs413() async throws {
        try await APIHarness.run(maximumBodySize: 4096) { h in
            let tokens = (0..<100).map { "\"\(APIHarness.token($0))\"" }.joined(separator: ",")
            let response = try await h.request(
                .post, Self.uri, key: h.keyA,
                json: #"{"target": {"tokens": [\#(tokens)]}, "notification": {"aps": {"alert": "hi"}}}"#
            )
            #expect(response.status == .contentTooLarge)
            #expect(try await h.store.jobSummaries(since: 0).isEmpty)
        }
    }

    @Test func aBadIdempotencyKeyIsRejected() async throws {
        try await APIHarness.run { h in
            let response = try await h.request(
                .post, Self.uri, key: h.keyA,
                json: #"{"id": "a", "target": {"all": true}, "notification": {"aps": {"alert": "hi"}}}"#,
                headers: [.init("Idempotency-Key")!: "b"]
            )
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "id_mismatch")
        }
    }
}
