import APNSCore
import Testing

@Suite struct APNSOutcomeTests {
    @Test func decodes410WithItsTimestamp() {
        let body = Array(#"{"reason":"Unregistered","timestamp":1700000000123}"#.utf8)
        let outcome = APNSOutcome(status: 410, apnsID: "id", apnsUniqueID: "u", body: body)
        #expect(outcome.reason == .unregistered)
        #expect(outcome.timestamp == 1_700_000_000_123)
        #expect(outcome.apnsID == "id")
        #expect(outcome.apnsUniqueID == "u")
        #expect(!outcome.isSuccess)
    }

    @Test(arguments: APNSReason.documented)
    func everyDocumentedReasonDecodes(status: Int, reason: APNSReason) {
        let body = Array(#"{"reason": "\#(reason.rawValue)"}"#.utf8)
        let outcome = APNSOutcome(status: status, apnsID: nil, apnsUniqueID: nil, body: body)
        #expect(outcome.reason == reason)
        #expect(outcome.reason?.isKnown == true)
    }

    @Test func unknownReasonsAreKeptAsText() {
        let outcome = APNSOutcome(
            status: 400, apnsID: nil, apnsUniqueID: nil, body: Array(#"{"reason":"NewThing"}"#.utf8))
        #expect(outcome.reason == APNSReason(rawValue: "NewThing"))
        #expect(outcome.reason?.isKnown == false)
    }

    @Test(arguments: ["", "<html>oops</html>", #"{"reason":"#, String(repeating: "x", count: 10_000)])
    func malformedBodiesKeepTheStatus(body: String) {
        let outcome = APNSOutcome(status: 500, apnsID: nil, apnsUniqueID: nil, body: Array(body.utf8))
        #expect(outcome.status == 500)
        #expect(outcome.reason == nil)
    }

    /// An error body from a proxy or a custom endpoint: a 19-digit `timestamp` overflowed the parser (and trapped
    /// the worker). Every number past the latest date kept is dropped; the status and reason stay.
    @Test(arguments: [
        "9999999999999999999", "9223372036854775807", "9223372036854775808", "99999999999999999999999999",
        "253402300800000",
    ])
    func aTimestampPastYear9999IsDroppedWithoutTrapping(digits: String) {
        let body = Array(#"{"reason":"Unregistered","timestamp":\#(digits)}"#.utf8)
        let outcome = APNSOutcome(status: 410, apnsID: nil, apnsUniqueID: nil, body: body)
        #expect(outcome.status == 410)
        #expect(outcome.reason == .unregistered)
        #expect(outcome.timestamp == nil)
    }

    @Test func theLatestTimestampKeptIsTheEndOfYear9999() {
        let body = Array(#"{"reason":"Unregistered","timestamp":253402300799999}"#.utf8)
        let outcome = APNSOutcome(status: 410, apnsID: nil, apnsUniqueID: nil, body: body)
        #expect(outcome.timestamp == 253_402_300_799_999)
    }
}
