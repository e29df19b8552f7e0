import Foundation
import HeraldAPI
import HeraldCore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// What `schemas/openapi.yaml` promises for inputs that used to get a 5xx, a 404 instead of a 405, or a silent
/// typo (issues 32 and 33): each answered as the document says.
@Suite struct ContractRoutesTests {
    @Test func undeclaredMethodsOnKnownPathsAre405WithAllow() async throws {
        try await APIHarness.run { h in
            for (method, path, allow) in [
                (HTTPRequest.Method.patch, "/v1/jobs/j1", "DELETE, GET"),
                (.post, "/v1/apps/\(APIHarness.appA)/devices/\(APIHarness.token(1))", "DELETE, GET"),
                (.get, "/v1/apps/\(APIHarness.appA)/notifications", "POST"),
                (.delete, "/health/live", "GET"),
            ] {
                let answer = try await h.request(method, path, key: h.keyA)
                #expect(answer.status == .methodNotAllowed, "\(method) \(path)")
                #expect(answer.headers[.allow] == allow, "\(method) \(path)")
                #expect(answer.errorCode == "method_not_allowed")
            }
            let unknown = try await h.request(.get, "/v1/nothing/here", key: h.keyA)
            #expect(unknown.status == .notFound)
        }
    }

    @Test func inputsThatUsedToAnswer500AreRefusedOrServed() async throws {
        try await APIHarness.run { h in
            let nul = try await h.request(.get, "/v1/jobs/a%00b", key: h.keyA)
            #expect(nul.status == .badRequest)
            #expect(nul.errorCode == "invalid_job")
            let report = "/v1/apps/\(APIHarness.appA)/reports/dead-tokens"
            for query in ["since=100000000d", "since=99999999999999999999999w", "limit=99999999999999999999"] {
                let answer = try await h.request(.get, report + "?" + query, key: h.keyA)
                #expect(answer.status == .ok, "\(query)")
            }
            for query in ["since=", "since=300000-01-01T00:00:00Z", "limit=-1"] {
                let answer = try await h.request(.get, report + "?" + query, key: h.keyA)
                #expect(answer.status == .badRequest, "\(query)")
            }
            let notifications = "/v1/apps/\(APIHarness.appA)/notifications"
            let farFuture = try await h.request(
                .post, notifications, key: h.keyA,
                json: #"{"target":{"all":true},"send_at":"300000-01-01T00:00:00Z","notification":{"aps":{"alert":"x"}}}"#)
            #expect(farFuture.status == .badRequest)
        }
    }

    @Test func unknownFieldsAreRefusedWithTheNearestName() async throws {
        try await APIHarness.run { h in
            let cases: [(String, String, String)] = [
                (
                    "/v1/apps/\(APIHarness.appA)/notifications",
                    #"{"target":{"all":true},"sendAt":"2030-01-01T00:00:00Z","notification":{"aps":{"alert":"x"}}}"#,
                    "unknown field sendAt in the job; did you mean send_at?"
                ),
                (
                    "/v1/apps/\(APIHarness.appA)/devices",
                    #"{"token":"\#(APIHarness.token(1))","userId":"u1"}"#,
                    "unknown field userId in the device registration; did you mean user_id?"
                ),
            ]
            for (path, body, message) in cases {
                let answer = try await h.request(.post, path, key: h.keyA, json: body)
                #expect(answer.status == .badRequest)
                #expect((answer.object["error"] as? [String: Any])?["message"] as? String == message)
            }
        }
    }

    @Test func anAlertWithNothingToShowIsRefusedWithAPointerToBackground() async throws {
        try await APIHarness.run { h in
            let answer = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/notifications", key: h.keyA,
                json: #"{"target":{"all":true},"notification":{"aps":{}}}"#)
            #expect(answer.status == .unprocessableContent)
            #expect(answer.errorCode == "invalid_notification")
            #expect(answer.text.contains("push_type background"))
        }
    }

    @Test(arguments: [
        ("100000000d", Int64(0)), ("99999999999999999999999999d", Int64(0)), ("1s", Int64(999_000)),
    ])
    func durationsReachingBefore1970Mean1970(text: String, milliseconds: Int64) {
        #expect(TimeWindow.milliseconds(text, now: Date(timeIntervalSince1970: 1000)) == milliseconds)
    }
}
