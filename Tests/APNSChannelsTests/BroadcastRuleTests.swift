import APNSChannels
import APNSCore
import Testing

/// The rules a broadcast is checked against before it is sent, and how answers are classified.
@Suite struct BroadcastRuleTests {
    static let channel = "dHJhbnNpZW50LWNoYW5uZWw="

    @Test func aValidBroadcastBreaksNoRule() {
        let request = BroadcastRequest(
            channelID: Self.channel, payload: Array(#"{"aps":{"event":"update"}}"#.utf8), priority: .conservePower,
            expiration: 0)
        #expect(request.ruleViolation(policy: .noStorage) == nil)
        #expect(request.ruleViolation(policy: .mostRecent) == nil)
    }

    @Test func aNoStorageChannelTakesOnlyExpirationZero() {
        for expiration: Int64? in [nil, 1, 1_900_000_000] {
            let request = BroadcastRequest(channelID: Self.channel, payload: [0x7b, 0x7d], expiration: expiration)
            #expect(request.ruleViolation(policy: .noStorage)?.reason == ChannelReason.badExpirationDate)
            #expect(request.ruleViolation(policy: .mostRecent) == nil)
        }
    }

    @Test func payloadsOverFiveKilobytesAreTooLarge() {
        let fits = BroadcastRequest(channelID: Self.channel, payload: Array(repeating: 0x20, count: 5120))
        let over = BroadcastRequest(channelID: Self.channel, payload: Array(repeating: 0x20, count: 5121))
        #expect(fits.ruleViolation() == nil)
        #expect(over.ruleViolation()?.reason == ChannelReason.payloadTooLarge)
    }

    @Test(arguments: [(1, true), (5, false), (10, false), (7, true)])
    func priorityMustBeFiveOrTen(priority: Int, breaks: Bool) {
        let request = BroadcastRequest(
            channelID: Self.channel, payload: [0x7b, 0x7d], priority: Priority(rawValue: priority))
        #expect((request.ruleViolation()?.reason == ChannelReason.badPriority) == breaks)
    }

    @Test func anEmptyChannelOrPayloadBreaksARule() {
        #expect(BroadcastRequest(channelID: "", payload: [0x7b, 0x7d]).ruleViolation()?.reason == "MissingChannelId")
        #expect(BroadcastRequest(channelID: Self.channel, payload: []).ruleViolation()?.reason == "PayloadEmpty")
    }

    @Test(arguments: [
        (200, false), (400, false), (403, false), (410, false), (413, false), (429, true), (500, true), (503, true),
    ])
    func onlyThrottlingAndServerErrorsAreTransient(status: Int, transient: Bool) {
        #expect(BroadcastResult(status: status).isTransient == transient)
        #expect(BroadcastResult(status: status).isSuccess == (status == 200))
    }

    @Test func theQuotaErrorReadsTheSameWhetherHeraldOrAppleFoundIt() {
        let local = APNSChannelsError.quotaReached()
        #expect(local.isQuotaReached)
        #expect(local.status == nil)
        #expect(!local.isTransient)
        #expect(local.description.contains("10,000 channels"))
        #expect(local.description.hasPrefix("creating a channel failed: "))
    }
}
