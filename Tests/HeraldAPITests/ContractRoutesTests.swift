import Foundation
import HeraldAPI
import HeraldCore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// What `schemas/openapi.yaml` promises for inputs that used to get a 5xx, a 404 instead of a 405, or a silent
/// typo (issues 32 and 33): each answered as the document says.
@Suite(.needsServices) struct ContractRoutesTests {
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
            let sixDigitYear =
                #"{"target":{"all":true},"send_at":"300000-01-01T00:00:00Z","#
                + #""notification":{"aps":{"alert":"x"}}}"#
            let farFuture = try await h.request(.post, notifications, key: h.keyA, json: sixDigitYear)
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

    /// The API checks what `herald devices import` checks (DeviceFields), token lengths per kind included.
    @Test func registrationsFollowTheRulesTheImportFollows() async throws {
        try await APIHarness.run { h in
            let devices = "/v1/apps/\(APIHarness.appA)/devices"
            for (body, code) in [
                (#"{"token": "aabbccdd"}"#, "invalid_token"),  // 4 bytes: no APNs token is that short
                (#"{"token": "\#(APIHarness.token(1))", "locale": "1en"}"#, "invalid_field"),
                (#"{"token": "\#(APIHarness.token(1))", "user_id": "u\u0085"}"#, "invalid_field"),
                (#"{"token": "\#(APIHarness.token(1))", "topics": ["a;b"]}"#, "invalid_field"),
            ] {
                let answer = try await h.request(.post, devices, key: h.keyA, json: body)
                #expect(answer.status == .badRequest, "\(body)")
                #expect(answer.errorCode == code, "\(body)")
            }
            let user = String(repeating: "é", count: 256)  // 256 characters, 512 bytes
            let accepted = try await h.request(
                .post, devices, key: h.keyA,
                json: #"{"token": "\#(APIHarness.token(1))", "locale": "en_US", "user_id": "\#(user)"}"#)
            #expect(accepted.status == .created)
            let start = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/devices/\(APIHarness.token(1))/live-activities/push-to-start",
                key: h.keyA, json: #"{"activity_type": "T", "token": "aabbccdd"}"#)
            #expect(start.status == .badRequest)
            #expect(start.text.contains("push-to-start token is 4 bytes"))
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
