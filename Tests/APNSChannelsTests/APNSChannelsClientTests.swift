import APNSChannels
import APNSCore
import APNSSimulator
import Foundation
import HeraldTestSupport
import NIOPosix
import Synchronization
import Testing

/// The channel client against the simulator over loopback TLS: Apple's management API and broadcasts.
@Suite struct APNSChannelsClientTests {
    @Test(arguments: ChannelStoragePolicy.allCases)
    func aCreatedChannelHasItsIdFromTheHeaderAndItsPolicy(policy: ChannelStoragePolicy) async throws {
        try await ChannelsFixture.run { fixture in
            let id = try await fixture.withClient { client in try await client.createChannel(storagePolicy: policy) }
            let held = fixture.simulator.channels(bundleID: ChannelsFixture.bundle)
            #expect(held.map(\.id) == [id])
            #expect(held.first?.messageStoragePolicy == policy.rawValue)
            let read = try await fixture.withClient { client in try await client.channelPolicy(id: id) }
            #expect(read == policy)
        }
    }

    @Test func listingShowsEveryChannelAndDeletingAnswered204RemovesOne() async throws {
        try await ChannelsFixture.run { fixture in
            try await fixture.withClient { client in
                let first = try await client.createChannel(storagePolicy: .mostRecent)
                let second = try await client.createChannel(storagePolicy: .noStorage)
                #expect(try await client.listChannels() == [first, second])
                try await client.deleteChannel(id: first)
                #expect(try await client.listChannels() == [second])
                #expect(fixture.simulator.counts["204"] == 1)
                // Deleting again: APNs no longer knows it.
                let again = await #expect(throws: APNSChannelsError.self) { try await client.deleteChannel(id: first) }
                #expect(again?.reason == ChannelReason.channelNotRegistered)
                #expect(again?.status == 400)
                #expect(again?.isTransient == false)
            }
        }
    }

    @Test func anUnknownChannelHasNoPolicy() async throws {
        try await ChannelsFixture.run { fixture in
            let policy = try await fixture.withClient { client in
                try await client.channelPolicy(
                    id: Data((0..<16).map { _ in UInt8.random(in: 0...255) })
                        .base64EncodedString())
            }
            #expect(policy == nil)
        }
    }

    @Test func anEmptyListIsEmpty() async throws {
        try await ChannelsFixture.run { fixture in
            let ids = try await fixture.withClient { client in try await client.listChannels() }
            #expect(ids == [])
        }
    }

    @Test func broadcastOnANoStorageChannelNeedsExpirationZero() async throws {
        try await ChannelsFixture.run { fixture in
            let channel = fixture.simulator.addChannel(bundleID: ChannelsFixture.bundle, messageStoragePolicy: 0)
            try await fixture.withClient { client in
                let refused = try await client.broadcast(
                    BroadcastRequest(channelID: channel.id, payload: ChannelsFixture.update, priority: .immediate))
                #expect(refused.status == 400)
                #expect(refused.reason == ChannelReason.badExpirationDate)
                #expect(!refused.isSuccess && !refused.isTransient)
                let requestID = UUID().uuidString.lowercased()
                let sent = try await client.broadcast(
                    BroadcastRequest(
                        channelID: channel.id, payload: ChannelsFixture.update, priority: .conservePower,
                        expiration: 0, requestID: requestID))
                #expect(sent.isSuccess)
                #expect(sent.requestID == requestID)
            }
            await fixture.simulator.waitForBroadcasts(count: 1)
            let record = try #require(fixture.simulator.broadcasts.first)
            #expect(record.channelID == channel.id)
            #expect(record.topic == ChannelsFixture.bundle + ".push-type.liveactivity")
            #expect(record.pushType == "liveactivity")
            #expect(record.priority == 5)
            #expect(record.expiration == 0)
            #expect(record.payload.utf8.elementsEqual(ChannelsFixture.update))
        }
    }

    @Test func broadcastOnAMostRecentChannelTakesAnExpiration() async throws {
        try await ChannelsFixture.run { fixture in
            let channel = fixture.simulator.addChannel(bundleID: ChannelsFixture.bundle, messageStoragePolicy: 1)
            let expiration = Int64(Date().timeIntervalSince1970) + 3600
            let result = try await fixture.withClient { client in
                try await client.broadcast(
                    BroadcastRequest(
                        channelID: channel.id, payload: ChannelsFixture.update, priority: .immediate,
                        expiration: expiration))
            }
            #expect(result.isSuccess)
            #expect(result.requestID?.isEmpty == false)
            await fixture.simulator.waitForBroadcasts(count: 1)
            #expect(fixture.simulator.broadcasts.first?.expiration == expiration)
            #expect(fixture.simulator.broadcasts.first?.priority == 10)
        }
    }

    @Test func broadcastRefusalsAreResultsWithAppleReasons() async throws {
        try await ChannelsFixture.run { fixture in
            let channel = fixture.simulator.addChannel(bundleID: ChannelsFixture.bundle, messageStoragePolicy: 1)
            try await fixture.withClient { client in
                let unknown = try await client.broadcast(
                    BroadcastRequest(channelID: "dW5rbm93bi1jaGFubmVs", payload: ChannelsFixture.update))
                #expect(unknown.reason == ChannelReason.channelNotRegistered)
                let malformed = try await client.broadcast(
                    BroadcastRequest(channelID: "not*base64", payload: ChannelsFixture.update))
                #expect(malformed.reason == ChannelReason.badChannelId)
                let large = try await client.broadcast(
                    BroadcastRequest(channelID: channel.id, payload: Array(repeating: 0x20, count: 5121)))
                #expect(large.status == 413)
                #expect(large.reason == ChannelReason.payloadTooLarge)
                let priority = try await client.broadcast(
                    BroadcastRequest(channelID: channel.id, payload: ChannelsFixture.update, priority: .low))
                #expect(priority.reason == ChannelReason.badPriority)
            }
            #expect(fixture.simulator.broadcasts.isEmpty)
        }
    }

    @Test func anEmptyChannelIdIsRefusedBeforeAnyRequest() async throws {
        try await ChannelsFixture.run { fixture in
            try await fixture.withClient { client in
                let error = await #expect(throws: APNSChannelsError.self) {
                    try await client.broadcast(BroadcastRequest(channelID: "", payload: ChannelsFixture.update))
                }
                #expect(error?.reason == ChannelReason.missingChannelId)
                #expect(error?.status == nil)
            }
            #expect(fixture.simulator.counts.isEmpty)
        }
    }

    @Test func theQuotaAnswerReadsAsTheQuota() async throws {
        try await ChannelsFixture.run {
            $0.maximumChannelsPerApp = 1
        } _: { fixture in
            try await fixture.withClient { client in
                _ = try await client.createChannel(storagePolicy: .mostRecent)
                let error = await #expect(throws: APNSChannelsError.self) {
                    try await client.createChannel(storagePolicy: .mostRecent)
                }
                #expect(error?.reason == ChannelReason.cannotCreateChannelConfig)
                #expect(error?.isQuotaReached == true)
                #expect(error?.description == APNSChannelsError.quotaReached().description)
            }
        }
    }

    @Test func aBundleWithoutBroadcastAnswersFeatureNotEnabledEverywhere() async throws {
        try await ChannelsFixture.run {
            $0.broadcastDisabledBundles = [ChannelsFixture.bundle]
        } _: { fixture in
            try await fixture.withClient { client in
                let error = await #expect(throws: APNSChannelsError.self) {
                    try await client.createChannel(storagePolicy: .noStorage)
                }
                #expect(error?.reason == ChannelReason.featureNotEnabled)
                #expect(error?.description.contains("creating a channel failed") == true)
                #expect(error?.description.contains("FeatureNotEnabled") == true)
                let list = await #expect(throws: APNSChannelsError.self) { try await client.listChannels() }
                #expect(list?.reason == ChannelReason.featureNotEnabled)
                let broadcast = try await client.broadcast(
                    BroadcastRequest(channelID: "dW5rbm93bi1jaGFubmVs", payload: ChannelsFixture.update))
                #expect(broadcast.reason == ChannelReason.featureNotEnabled)
            }
        }
    }

    @Test func aBundleTheKeyMayNotPushToIsRefused() async throws {
        try await ChannelsFixture.run {
            $0.topics = ["com.example.other"]
        } _: { fixture in
            let error = await #expect(throws: APNSChannelsError.self) {
                try await fixture.withClient { client in try await client.createChannel(storagePolicy: .mostRecent) }
            }
            #expect(error?.reason == ChannelReason.topicDisallowed)
        }
    }

    @Test func anUnknownKeyIsAnInvalidProviderTokenAndNeverShowsTheToken() async throws {
        try await ChannelsFixture.run { fixture in
            let tokens = ChannelsFixture.tokens(
                keyPEM: TestCredentials.secondProviderKeyPEM, keyID: TestCredentials.secondKeyID)
            let token = try tokens.current().value
            let error = await #expect(throws: APNSChannelsError.self) {
                try await fixture.withClient(tokens: tokens) { client in try await client.listChannels() }
            }
            #expect(error?.status == 403)
            #expect(error?.reason == ChannelReason.invalidProviderToken)
            #expect(error?.description.contains(token) == false)
            #expect(error?.description.contains("listing channels failed") == true)
        }
    }

    @Test func anExpiredTokenIsReplacedOnceAndTheRequestRetried() async throws {
        try await ChannelsFixture.run {
            $0.minimumTokenUpdateInterval = nil
        } _: { fixture in
            // The first token is signed two hours in the past; the clock is right from the second reading on.
            let readings = Mutex(0)
            let tokens = ChannelsFixture.tokens(now: {
                let first = readings.withLock { count in
                    count += 1
                    return count == 1
                }
                return Int64(Date().timeIntervalSince1970) - (first ? 7200 : 0)
            })
            let ids = try await fixture.withClient(tokens: tokens) { client in try await client.listChannels() }
            #expect(ids == [])
            #expect(fixture.simulator.counts["403 ExpiredProviderToken"] == 1)
            #expect(fixture.simulator.counts["200"] == 1)
        }
    }

    @Test func noAnswerInTimeIsATransientError() async throws {
        try await ChannelsFixture.run {
            $0.responseDelay = .seconds(5)
        } _: { fixture in
            var configuration = fixture.configuration()
            configuration.requestTimeout = .milliseconds(300)
            let error = await #expect(throws: APNSChannelsError.self) {
                try await fixture.withClient(configuration) { client in
                    try await client.broadcast(
                        BroadcastRequest(channelID: "dW5rbm93bi1jaGFubmVs", payload: ChannelsFixture.update))
                }
            }
            #expect(error?.isTransient == true)
            #expect(error?.status == nil)
        }
    }

    @Test func aServerNobodyListensOnIsATransientError() async throws {
        var port = 0
        try await ChannelsFixture.run { fixture in port = fixture.port }
        let configuration = APNSChannelsConfiguration(
            bundleID: ChannelsFixture.bundle, managementHost: "127.0.0.1", managementPort: port,
            broadcastHost: "127.0.0.1", broadcastPort: port, additionalTrustRootsPEM: [TestCredentials.caCertificatePEM]
        )
        let client = APNSChannelsClient(
            configuration: configuration, providerTokens: ChannelsFixture.tokens(),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: .init(label: "test"))
        let error = await #expect(throws: APNSChannelsError.self) { try await client.listChannels() }
        await client.shutdown()
        #expect(error?.isTransient == true)
        #expect(error?.description == "listing channels failed: cannot connect to APNs")
    }

    @Test func aServerOutsideTheTrustedRootsIsRefused() async throws {
        try await ChannelsFixture.run { fixture in
            var configuration = fixture.configuration()
            configuration.additionalTrustRootsPEM = [TestCredentials.unrelatedCACertificatePEM]
            let error = await #expect(throws: APNSChannelsError.self) {
                try await fixture.withClient(configuration) { client in try await client.listChannels() }
            }
            #expect(error?.description.contains("TLS") == true)
            #expect(fixture.simulator.counts.isEmpty)
        }
    }
}
