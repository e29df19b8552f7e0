import FCMCore
import HeraldCore
import Testing

/// FCM's table over every answer FCM documents (FCM.md), as FCM writes them: the status, the error body, and
/// `Retry-After`. Read through `FCMAnswer` as the worker reads them.
@Suite struct FCMSettlementTableTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var status: Int
        var body: String
        var verdict: Verdict
        var reason: String?
        var testDescription: String { "\(status) \(reason ?? "-")" }
    }

    static func error(_ code: Int, _ status: String, fcm: String? = nil, field: String? = nil, message: String = "x")
        -> String
    {
        var details: [String] = []
        if let fcm {
            details.append(#"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(fcm)"}"#)
        }
        if let field {
            details.append(
                #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#(field)","description":"bad"}]}"#
            )
        }
        return
            #"{"error":{"code":\#(code),"message":"\#(message)","status":"\#(status)","details":[\#(details.joined(separator: ","))]}}"#
    }

    static let cases: [Case] = [
        Case(status: 200, body: #"{"name":"projects/p/messages/1"}"#, verdict: .delivered, reason: nil),
        Case(status: 404, body: error(404, "NOT_FOUND", fcm: "UNREGISTERED"), verdict: .prune, reason: "UNREGISTERED"),
        Case(
            status: 400, body: error(400, "INVALID_ARGUMENT", fcm: "INVALID_ARGUMENT", field: "message.token"),
            verdict: .prune, reason: "InvalidRegistration"),
        Case(
            status: 400,
            body: error(
                400, "INVALID_ARGUMENT", fcm: "INVALID_ARGUMENT",
                message: "The registration token is not a valid FCM registration token"),
            verdict: .prune, reason: "InvalidRegistration"),
        Case(
            status: 400, body: error(400, "INVALID_ARGUMENT", fcm: "INVALID_ARGUMENT", field: "message.data[0].value"),
            verdict: .failDevice, reason: "INVALID_ARGUMENT"),
        Case(
            status: 403, body: error(403, "PERMISSION_DENIED", fcm: "SENDER_ID_MISMATCH"), verdict: .prune,
            reason: "SENDER_ID_MISMATCH"),
        Case(
            status: 429, body: error(429, "RESOURCE_EXHAUSTED", fcm: "QUOTA_EXCEEDED"), verdict: .transient,
            reason: "QUOTA_EXCEEDED"),
        Case(
            status: 503, body: error(503, "UNAVAILABLE", fcm: "UNAVAILABLE"), verdict: .transient,
            reason: "UNAVAILABLE"),
        Case(status: 500, body: error(500, "INTERNAL", fcm: "INTERNAL"), verdict: .transient, reason: "INTERNAL"),
        Case(
            status: 401, body: error(401, "UNAUTHENTICATED", fcm: "THIRD_PARTY_AUTH_ERROR"), verdict: .failJob,
            reason: "THIRD_PARTY_AUTH_ERROR"),
        Case(status: 401, body: error(401, "UNAUTHENTICATED"), verdict: .failJob, reason: "UNAUTHENTICATED"),
        Case(status: 403, body: error(403, "PERMISSION_DENIED"), verdict: .failJob, reason: "PERMISSION_DENIED"),
        Case(status: 404, body: "<html>not found</html>", verdict: .failJob, reason: nil),
        Case(status: 502, body: "", verdict: .transient, reason: nil),
        Case(status: 413, body: "", verdict: .failDevice, reason: nil),
        Case(
            status: 400, body: error(400, "INVALID_ARGUMENT", fcm: "UNSPECIFIED_ERROR"), verdict: .failDevice,
            reason: "UNSPECIFIED_ERROR"),
    ]

    @Test(arguments: cases) func everyDocumentedAnswerHasItsVerdict(_ test: Case) {
        let answer = ProviderAnswer(
            FCMAnswer(status: test.status, body: Array(test.body.utf8)), retryAfter: nil, now: 0)
        #expect(FCMSettlementTable().verdict(on: answer) == test.verdict)
        #expect(answer.reason?.rawValue == test.reason)
        if let reason = answer.reason { #expect(reason.provider == "FCM") }
    }

    @Test func senderIDMismatchCountsAgainstTheAppAndUnregisteredDoesNot() {
        let mismatch = ProviderAnswer(
            FCMAnswer(status: 403, body: Array(Self.error(403, "PERMISSION_DENIED", fcm: "SENDER_ID_MISMATCH").utf8)),
            retryAfter: nil, now: 0)
        let dead = ProviderAnswer(
            FCMAnswer(status: 404, body: Array(Self.error(404, "NOT_FOUND", fcm: "UNREGISTERED").utf8)),
            retryAfter: nil, now: 0)
        #expect(mismatch.reason?.countsAgainstApp == true)
        #expect(dead.reason?.countsAgainstApp == false)
    }

    @Test func aTransientAnswerWaitsAtLeastItsRetryAfter() {
        let answer = ProviderAnswer(
            FCMAnswer(status: 429, body: Array(Self.error(429, "RESOURCE_EXHAUSTED", fcm: "QUOTA_EXCEEDED").utf8)),
            retryAfter: "60", now: 0)
        #expect(answer.retryAfter == .seconds(60))
        let decided = disposition(
            for: .answered(answer), attempt: 1, policy: RetryPolicy(), jitter: 1, table: FCMSettlementTable())
        guard case .retry(_, let delay) = decided else {
            Issue.record("a quota answer is retried, not \(decided)")
            return
        }
        #expect(delay >= .seconds(60))
        // A 400, 403 or 404 is never retried, at any attempt.
        for body in [
            Self.error(400, "INVALID_ARGUMENT", fcm: "INVALID_ARGUMENT"), Self.error(403, "PERMISSION_DENIED"),
        ] {
            let refused = ProviderAnswer(FCMAnswer(status: 400, body: Array(body.utf8)), retryAfter: nil, now: 0)
            for attempt in 1...5 {
                let decided = disposition(
                    for: .answered(refused), attempt: attempt, policy: RetryPolicy(), table: FCMSettlementTable())
                if case .retry = decided { Issue.record("a refused answer was retried") }
            }
        }
    }
}
