import APNSChannels
import Testing

@testable import HeraldWorker

/// A channel broadcast's answers as plans: APNs' table for the broadcast endpoint, written down independently.
@Suite struct ChannelSettlementTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let answer: ChannelAnswer
        let sent: Bool
        let forget: Bool
        let failure: String?
        var testDescription: String { "\(answer)" }
    }

    static let cases: [Case] = [
        Case(answer: .answered(BroadcastResult(status: 200)), sent: true, forget: false, failure: nil),
        Case(
            answer: .answered(BroadcastResult(status: 400, reason: "ChannelNotRegistered")), sent: false, forget: true,
            failure: "ChannelNotRegistered: APNs refused the broadcast (400)"),
        Case(
            answer: .answered(BroadcastResult(status: 400, reason: "BadExpirationDate")), sent: false, forget: false,
            failure: "BadExpirationDate: APNs refused the broadcast (400)"),
        Case(
            answer: .answered(BroadcastResult(status: 403, reason: "FeatureNotEnabled")), sent: false, forget: false,
            failure: "FeatureNotEnabled: APNs refused the broadcast (403)"),
        // Still transient after the last try: refused with its reason.
        Case(
            answer: .answered(BroadcastResult(status: 503)), sent: false, forget: false,
            failure: "status 503: APNs refused the broadcast (503)"),
        Case(
            answer: .failed(reason: "ConnectionFailed", message: "connection refused", transient: true), sent: false,
            forget: false, failure: "ConnectionFailed: connection refused"),
    ]

    @Test(arguments: cases) func eachAnswerComesToItsPlan(_ test: Case) {
        let plan = ChannelSettlement.plan(test.answer)
        #expect(plan.sent == test.sent)
        #expect(plan.forgetChannel == test.forget)
        #expect(plan.failure == test.failure)
    }

    @Test func transientAnswersAreTheOnesTriedAgain() {
        #expect(ChannelAnswer.answered(BroadcastResult(status: 429)).isTransient)
        #expect(ChannelAnswer.answered(BroadcastResult(status: 500)).isTransient)
        #expect(!ChannelAnswer.answered(BroadcastResult(status: 400, reason: "BadChannelId")).isTransient)
        #expect(!ChannelAnswer.failed(reason: "x", message: "y", transient: false).isTransient)
    }
}
