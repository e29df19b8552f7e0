import APNSCore
import FCMCore
import FCMSimulator
import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import NIOPosix
import PushTransport
import Testing

@testable import HeraldWorker

/// An app's FCM transport as the worker builds it from the apps file (`APNSClients`: the service account read, the
/// process's access-token cache minting at the simulator's `/token`, the FCM client on the shared libnghttp2 stack),
/// against Herald's FCM simulator on loopback.
@Suite struct FCMTransportTests {
    /// A simulator, and the worker's clients for one app whose `fcm` block points at it.
    static func withTransport(
        simulator configure: (inout FCMSimulatorConfiguration) -> Void = { _ in },
        _ body: (FCMSimulator, FCMTransport) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = TestFCM.simulatorConfiguration()
        configure(&configuration)
        var logger = Logger(label: "fcm-sim")
        logger.logLevel = .warning
        let simulator = FCMSimulator(configuration: configuration, eventLoopGroup: group, logger: logger)
        let port = try await simulator.start()
        let directory = NSTemporaryDirectory() + "herald-fcm-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try TestFCM.serviceAccountJSON(tokenURI: simulator.tokenAudience).write(
            toFile: directory + "/service-account.json", atomically: true, encoding: .utf8)
        try TestCredentials.caCertificatePEM.write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
        try TestCredentials.providerKeyPEM.write(toFile: directory + "/key.p8", atomically: true, encoding: .utf8)
        let apps = AppsFile(apps: [
            AppConfiguration(
                id: "both", topic: "com.example.both", environment: .sandbox, endpoint: "https://127.0.0.1:1",
                auth: .token(teamID: TestCredentials.teamID, keyID: TestCredentials.keyID, keyFile: "key.p8"),
                fcm: .init(
                    serviceAccountFile: "service-account.json", endpoint: "https://127.0.0.1:\(port)",
                    caFile: "ca.pem", channelID: "news"))
        ])
        let clients = try APNSClients(
            apps: apps, directory: directory, connectionsPerApp: 1, requestTimeout: .seconds(10),
            eventLoopGroup: group, logger: Logger(label: "clients"))
        let lease = try #require(clients.lease("both"))
        let transport = try #require(lease.clients.fcm)
        do {
            try await body(simulator, transport)
        } catch {
            clients.release(lease)
            await clients.shutdown()
            try await simulator.stop()
            throw error
        }
        clients.release(lease)
        await clients.shutdown()
        try await simulator.stop()
        try await group.shutdownGracefully()
    }

    /// A `messages:send` body for `token` with a small notification.
    static func body(_ token: String) throws -> [UInt8] {
        let message = FCMMessage(
            notification: FCMNotification(title: "Hi", body: "there"), data: ["k": "v"],
            android: FCMAndroidConfig(priority: .high, ttl: 60))
        return try message.template().body(for: FCMTarget(token: token))
    }

    @Test func manySendsShareOneAccessTokenAndStayWithinGooglesStreamLimit() async throws {
        try await Self.withTransport { simulator, transport in
            let bodies = try (0..<500).map { try Self.body(TestFCM.registrationToken($0)) }
            let answers = await transport.transportAll(
                count: bodies.count, concurrency: 500, request: { bodies[$0] }, onAnswer: { _, _ in })
            let statuses = answers.map { answer -> Int in
                guard case .success(let answer)? = answer else { return -1 }
                return answer.status
            }
            #expect(statuses == Array(repeating: 200, count: 500))
            #expect(simulator.records.count == 500)
            // One access token for the whole run, however many requests waited for it at once.
            #expect(simulator.mintCount(for: TestFCM.clientEmail) == 1)
            #expect(Set(simulator.records.map(\.accessToken)).count == 1)
        }
    }

    @Test func aRevokedAccessTokenIsReplacedOnceAndTheSendRetried() async throws {
        try await Self.withTransport { simulator, transport in
            let first = try await transport.transport(try Self.body(TestFCM.registrationToken(1)))
            #expect(first.status == 200)
            simulator.revokeAccessTokens()
            let bodies = try (0..<50).map { try Self.body(TestFCM.registrationToken($0)) }
            let answers = await transport.transportAll(
                count: bodies.count, concurrency: 50, request: { bodies[$0] }, onAnswer: { _, _ in })
            #expect(answers.allSatisfy { if case .success(let answer)? = $0 { answer.status == 200 } else { false } })
            // 50 sends saw the 401: one new token.
            #expect(simulator.mintCount(for: TestFCM.clientEmail) == 2)
        }
    }

    @Test func answersReadAsFCMAsksThroughItsTable() async throws {
        try await Self.withTransport { configuration in
            configuration.deadTokenPrefixes = ["dead"]
            configuration.foreignTokenPrefixes = ["foreign"]
            configuration.thirdPartyAuthErrorPrefixes = ["thirdparty"]
            configuration.injectedFailures = [
                FCMInjectedFailure(status: 429, every: 1, tokenPrefix: "quota", retryAfter: 30)
            ]
        } _: { simulator, transport in
            let table = transport.settlement
            func answer(_ token: String) async throws -> ProviderAnswer {
                try await transport.transport(try Self.body(token + String(repeating: "x", count: 40)))
            }
            let dead = try await answer("dead")
            #expect(dead.status == 404 && dead.reason?.rawValue == "UNREGISTERED")
            #expect(table.verdict(on: dead) == .prune)
            let foreign = try await answer("foreign")
            #expect(foreign.reason?.rawValue == "SENDER_ID_MISMATCH" && foreign.reason?.countsAgainstApp == true)
            #expect(table.verdict(on: foreign) == .prune)
            let thirdParty = try await answer("thirdparty")
            #expect(thirdParty.status == 401 && table.verdict(on: thirdParty) == .failJob)
            // Not an FCM token at all: FCM names the field, so only that device is pruned.
            let invalid = try await transport.transport(
                Array(#"{"message":{"token":"not a token!","notification":{"title":"x"}}}"#.utf8))
            #expect(invalid.status == 400 && invalid.reason?.rawValue == FCMSettlementTable.invalidRegistration)
            #expect(table.verdict(on: invalid) == .prune)
            // A bad payload for a good token: that notification fails, the device stays.
            let payload = try await transport.transport(
                Array(#"{"message":{"token":"\#(TestFCM.registrationToken(7))","data":{"n":1}}}"#.utf8))
            #expect(payload.status == 400 && table.verdict(on: payload) == .failDevice)
            // The 401 THIRD_PARTY_AUTH_ERROR was not taken for an expired access token.
            #expect(simulator.mintCount(for: TestFCM.clientEmail) == 1)
            // A quota answer: transient, after its Retry-After; and the whole project waits it out: the next send is
            // held back without reaching FCM.
            let quota = try await answer("quota")
            #expect(quota.status == 429 && quota.retryAfter == .seconds(30))
            #expect(table.verdict(on: quota) == .transient)
            let sentBefore = simulator.requests.count
            let held = try await transport.transport(try Self.body(TestFCM.registrationToken(8)))
            #expect(held.status == 429 && held.reason?.rawValue == FCMTransport.quotaPause)
            #expect(held.retryAfter.map { $0 > .zero && $0 <= .seconds(30) } == true)
            #expect(table.verdict(on: held) == .transient)
            #expect(simulator.requests.count == sentBefore)
        }
    }
}
