import APNSCore
import APNSSimulator
import Foundation
import HeraldTestSupport
import NIOHTTP2
import Testing

/// One request that breaks one of APNs' rules, and the answer APNs gives.
struct RejectionCase: Sendable, CustomTestStringConvertible {
    var name: String
    var status: Int
    var reason: String
    var build: @Sendable (_ jwt: String) -> TestRequest

    var testDescription: String { "\(name) → \(status) \(reason)" }

    static func headers(_ name: String, _ status: Int, _ reason: String, _ extra: [(String, String)]) -> Self {
        Self(name: name, status: status, reason: reason) { Fixtures.request(jwt: $0, extra: extra) }
    }

    static func payload(_ name: String, _ pushType: String, topic: String, size: Int, _ status: Int, _ reason: String)
        -> Self
    {
        Self(name: name, status: status, reason: reason) {
            Fixtures.request(
                jwt: $0, pushType: pushType, topic: topic, body: Array(repeating: UInt8(ascii: " "), count: size))
        }
    }
}

/// One request that is unusual but valid.
struct AcceptedCase: Sendable, CustomTestStringConvertible {
    var name: String
    var build: @Sendable (_ jwt: String) -> TestRequest
    var testDescription: String { name }
}

@Suite struct APNSSimulatorTests {
    static let rejections: [RejectionCase] = [
        RejectionCase(name: "GET", status: 405, reason: "MethodNotAllowed") {
            Fixtures.request(jwt: $0, method: "GET")
        },
        RejectionCase(name: "wrong path", status: 404, reason: "BadPath") {
            Fixtures.request(jwt: $0, path: "/3/devices/\(Fixtures.token)")
        },
        RejectionCase(name: "path with extra segment", status: 404, reason: "BadPath") {
            Fixtures.request(jwt: $0, path: "/3/device/\(Fixtures.token)/x")
        },
        RejectionCase(name: "empty token", status: 400, reason: "MissingDeviceToken") {
            Fixtures.request(jwt: $0, path: "/3/device/")
        },
        RejectionCase(name: "non-hex token", status: 400, reason: "BadDeviceToken") {
            Fixtures.request(token: "xyz0", jwt: $0)
        },
        RejectionCase(name: "odd-length token", status: 400, reason: "BadDeviceToken") {
            Fixtures.request(token: "abc", jwt: $0)
        },
        RejectionCase(name: "configured bad token prefix", status: 400, reason: "BadDeviceToken") {
            Fixtures.request(token: "bad0" + String(repeating: "1", count: 60), jwt: $0)
        },
        RejectionCase(name: "no authorization", status: 403, reason: "MissingProviderToken") { jwt in
            var request = Fixtures.request(jwt: jwt)
            request.headers.removeAll { $0.0 == "authorization" }
            return request
        },
        RejectionCase(name: "authorization not bearer", status: 403, reason: "InvalidProviderToken") { jwt in
            var request = Fixtures.request(jwt: jwt)
            request.headers = request.headers.map { $0.0 == "authorization" ? ($0.0, "basic \(jwt)") : $0 }
            return request
        },
        RejectionCase(name: "garbage JWT", status: 403, reason: "InvalidProviderToken") { _ in
            Fixtures.request(jwt: "not.a.jwt")
        },
        RejectionCase(name: "no topic", status: 400, reason: "MissingTopic") { jwt in
            var request = Fixtures.request(jwt: jwt)
            request.headers.removeAll { $0.0 == "apns-topic" }
            return request
        },
        RejectionCase(name: "topic not allowed", status: 400, reason: "TopicDisallowed") {
            Fixtures.request(jwt: $0, topic: "com.example.other")
        },
        RejectionCase(name: "voip to the bare bundle id", status: 400, reason: "DeviceTokenNotForTopic") {
            Fixtures.request(jwt: $0, pushType: "voip")
        },
        RejectionCase(name: "unknown push type", status: 400, reason: "InvalidPushType") {
            Fixtures.request(jwt: $0, pushType: "telepathy")
        },
        .headers("priority 7", 400, "BadPriority", [("apns-priority", "7")]),
        .headers("priority not a number", 400, "BadPriority", [("apns-priority", "high")]),
        RejectionCase(name: "background with priority 10", status: 400, reason: "BadPriority") {
            Fixtures.request(jwt: $0, pushType: "background", extra: [("apns-priority", "10")])
        },
        .headers("expiration not a number", 400, "BadExpirationDate", [("apns-expiration", "tomorrow")]),
        .headers(
            "collapse id of 65 bytes", 400, "BadCollapseId", [("apns-collapse-id", String(repeating: "c", count: 65))]),
        .headers("apns-id not a UUID", 400, "BadMessageId", [("apns-id", "not-a-uuid")]),
        .headers("apns-id in upper case", 400, "BadMessageId", [("apns-id", "9F5E9C7E-2C8B-4E3A-9A57-6E1F8B0C2D3A")]),
        .headers("repeated apns-topic", 400, "DuplicateHeaders", [("apns-topic", Fixtures.topic)]),
        .payload("empty payload", "alert", topic: Fixtures.topic, size: 0, 400, "PayloadEmpty"),
        .payload("alert of 4097 bytes", "alert", topic: Fixtures.topic, size: 4097, 413, "PayloadTooLarge"),
        .payload("voip of 5121 bytes", "voip", topic: Fixtures.topic + ".voip", size: 5121, 413, "PayloadTooLarge"),
    ]

    @Test(arguments: rejections)
    func requestBreakingARuleIsRejectedWithAppleStatusAndReason(_ testCase: RejectionCase) async throws {
        try await withHarness {
            $0.badTokenPrefixes = ["bad0"]
        } _: { (harness: Harness) async throws in
            let requestID = "9f5e9c7e-2c8b-4e3a-9a57-6e1f8b0c2d3a"
            var request = testCase.build(harness.jwt)
            let hasID = request.headers.contains { $0.0 == "apns-id" }
            if !hasID { request.headers.append(("apns-id", requestID)) }
            let response = try await harness.client.send(request)
            #expect(response.status == testCase.status)
            #expect(response.reason == testCase.reason)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["apns-unique-id"].map(APNSRequest.isCanonicalUUID) == true)
            if !hasID { #expect(response.headers["apns-id"] == requestID) }
            #expect(harness.simulator.records.isEmpty)
            #expect(harness.simulator.counts == ["\(testCase.status) \(testCase.reason)": 1])
        }
    }

    static let acceptances: [AcceptedCase] = [
        AcceptedCase(name: "alert of exactly 4096 bytes") {
            Fixtures.request(jwt: $0, body: Array(repeating: UInt8(ascii: " "), count: 4096))
        },
        AcceptedCase(name: "voip of 5120 bytes") {
            Fixtures.request(
                jwt: $0,
                pushType: "voip",
                topic: Fixtures.topic + ".voip",
                body: Array(repeating: UInt8(ascii: " "), count: 5120)
            )
        },
        AcceptedCase(name: "background with priority 5") {
            Fixtures.request(jwt: $0, pushType: "background", extra: [("apns-priority", "5")])
        },
        AcceptedCase(name: "collapse id of 64 bytes") {
            Fixtures.request(jwt: $0, extra: [("apns-collapse-id", String(repeating: "c", count: 64))])
        },
        AcceptedCase(name: "liveactivity with its suffix") {
            Fixtures.request(
                jwt: $0, pushType: "liveactivity", topic: Fixtures.topic + ".push-type.liveactivity",
                body: Array(#"{"aps":{"content-state":{},"event":"update","timestamp":1800000000}}"#.utf8))
        },
        AcceptedCase(name: "no push type (alert assumed)") { jwt in
            var request = Fixtures.request(jwt: jwt)
            request.headers.removeAll { $0.0 == "apns-push-type" }
            return request
        },
        AcceptedCase(name: "upper-case token") { Fixtures.request(token: Fixtures.token.uppercased(), jwt: $0) },
        AcceptedCase(name: "expiration 0 and priority 1") {
            Fixtures.request(jwt: $0, extra: [("apns-expiration", "0"), ("apns-priority", "1")])
        },
    ]

    @Test(arguments: acceptances)
    func unusualButValidRequestIsAccepted(_ testCase: AcceptedCase) async throws {
        try await withHarness { (harness: Harness) async throws in
            let response = try await harness.client.send(testCase.build(harness.jwt))
            #expect(response.status == 200, "\(response.body)")
            #expect(harness.simulator.records.count == 1)
        }
    }

    @Test func validRequestIsAcceptedEchoingApnsIDAndRecorded() async throws {
        try await withHarness { (harness: Harness) async throws in
            let apnsID = "123e4567-e89b-12d3-a456-426614174000"
            let payload = #"{"aps":{"alert":{"title":"Hi","body":"there"}},"k":"v"}"#
            let request = Fixtures.request(
                jwt: harness.jwt,
                extra: [
                    ("apns-id", apnsID), ("apns-priority", "5"), ("apns-expiration", "1900000000"),
                    ("apns-collapse-id", "score"),
                ],
                body: Array(payload.utf8)
            )
            let response = try await harness.client.send(request)
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            #expect(response.headers["apns-id"] == apnsID)
            #expect(response.headers["apns-unique-id"].map(APNSRequest.isCanonicalUUID) == true)
            #expect(
                harness.simulator.records == [
                    APNSSimulatorRecord(
                        token: Fixtures.token,
                        topic: Fixtures.topic,
                        pushType: "alert",
                        priority: 5,
                        expiration: 1_900_000_000,
                        collapseID: "score",
                        apnsID: apnsID,
                        payload: payload,
                        receivedAt: harness.clock.now * 1000
                    )
                ]
            )
            #expect(harness.simulator.counts == ["200": 1])
        }
    }

    @Test func missingApnsIDIsGeneratedAsLowercaseUUID() async throws {
        try await withHarness { (harness: Harness) async throws in
            let response = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            let apnsID = try #require(response.headers["apns-id"])
            #expect(APNSRequest.isCanonicalUUID(apnsID))
            #expect(harness.simulator.records.first?.apnsID == apnsID)
            #expect(harness.simulator.records.first?.priority == 10)
        }
    }

    @Test func deadTokenIsUnregisteredWithTimestamp() async throws {
        try await withHarness { (harness: Harness) async throws in
            let response = try await harness.client.send(Fixtures.request(token: Fixtures.deadToken, jwt: harness.jwt))
            #expect(response.status == 410)
            #expect(response.reason == "Unregistered")
            #expect(response.outcome.timestamp == harness.clock.now * 1000)
            #expect(harness.simulator.counts == ["410 Unregistered": 1])
        }
    }

    @Test func listedDeadTokenUsesTheConfiguredTimestamp() async throws {
        let token = String(repeating: "7", count: 64)
        try await withHarness {
            $0.deadTokens = [token]
            $0.deadTimestamp = 1_234_567
        } _: { (harness: Harness) async throws in
            let response = try await harness.client.send(Fixtures.request(token: token, jwt: harness.jwt))
            #expect(response.status == 410)
            #expect(response.outcome.timestamp == 1_234_567)
        }
    }

    @Test func tokenSignedWithTheWrongKeyIsInvalid() async throws {
        let impostor = try ProviderTokenSigner(
            teamID: TestCredentials.teamID,
            keyID: TestCredentials.keyID,
            pemKey: TestCredentials.secondProviderKeyPEM
        )
        try await withHarness { (harness: Harness) async throws in
            let jwt = try impostor.makeToken(issuedAt: harness.clock.now)
            let response = try await harness.client.send(Fixtures.request(jwt: jwt))
            #expect(response.status == 403)
            #expect(response.reason == "InvalidProviderToken")
        }
    }

    @Test func tokenWithAnUnknownKeyOrTeamIsInvalid() async throws {
        let otherTeam = try ProviderTokenSigner(
            teamID: "OTHERTEAM1",
            keyID: TestCredentials.keyID,
            pemKey: TestCredentials.providerKeyPEM
        )
        try await withHarness { (harness: Harness) async throws in
            for signer in [Fixtures.secondSigner, otherTeam] {
                let jwt = try signer.makeToken(issuedAt: harness.clock.now)
                let response = try await harness.client.send(Fixtures.request(jwt: jwt))
                #expect(response.status == 403)
                #expect(response.reason == "InvalidProviderToken")
            }
        }
    }

    @Test func tokenIssuedMoreThanAnHourAgoIsExpired() async throws {
        try await withHarness { (harness: Harness) async throws in
            let jwt = try Fixtures.signer.makeToken(issuedAt: harness.clock.now - 3601)
            let response = try await harness.client.send(Fixtures.request(jwt: jwt))
            #expect(response.status == 403)
            #expect(response.reason == "ExpiredProviderToken")
        }
    }

    @Test func cachedTokenStillExpiresAfterAnHour() async throws {
        try await withHarness { (harness: Harness) async throws in
            let jwt = harness.jwt
            #expect(try await harness.client.send(Fixtures.request(jwt: jwt)).status == 200)
            harness.clock.advance(bySeconds: 3601)
            let response = try await harness.client.send(Fixtures.request(jwt: jwt))
            #expect(response.status == 403)
            #expect(response.reason == "ExpiredProviderToken")
        }
    }

    @Test func waitForRecordsResumesWhenEnoughNotificationsArrive() async throws {
        try await withHarness { (harness: Harness) async throws in
            let simulator = harness.simulator
            let jwt = harness.jwt
            async let waited: Void = simulator.waitForRecords(count: 3)
            let responses = (0..<3).map { _ in harness.client.start(Fixtures.request(jwt: jwt)) }
            for response in responses { #expect(try await response.get().status == 200) }
            await waited
            #expect(simulator.records.count == 3)
            // Already satisfied: returns at once.
            await simulator.waitForRecords(count: 2)
        }
    }

    @Test func waitForRecordsReturnsWhenCancelled() async throws {
        try await withHarness { (harness: Harness) async throws in
            let simulator = harness.simulator
            let waiter = Task { await simulator.waitForRecords(count: 1) }
            waiter.cancel()
            await waiter.value
            #expect(simulator.records.isEmpty)
        }
    }

    @Test(arguments: [1, 17, 1000])
    func initialSettingsAdvertiseTheConfiguredStreamLimit(_ limit: Int) async throws {
        try await withHarness {
            $0.maxConcurrentStreams = limit
        } _: { (harness: Harness) async throws in
            let frame = await harness.client.rootFrames.first(where: isMaxConcurrentStreamsSettings)
            #expect(frame != nil)
            #expect(harness.client.rootFrames.advertisedMaxConcurrentStreams == [limit])
        }
    }

    @Test func summaryCountsByStatusAndReason() async throws {
        try await withHarness { (harness: Harness) async throws in
            _ = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            _ = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            _ = try await harness.client.send(Fixtures.request(token: Fixtures.deadToken, jwt: harness.jwt))
            #expect(harness.simulator.counts == ["200": 2, "410 Unregistered": 1])
            #expect(
                harness.simulator.summary() == """
                    APNs simulator: 3 requests
                      200: 2
                      410 Unregistered: 1
                    """
            )
        }
    }

    @Test func acceptedNotificationsAreWrittenToTheRecordFileAsJSONLines() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apns-sim-\(UUID().uuidString).jsonl")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withHarness {
            $0.recordFile = path
        } _: { (harness: Harness) async throws in
            _ = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            _ = try await harness.client.send(Fixtures.request(token: Fixtures.deadToken, jwt: harness.jwt))
            _ = try await harness.client.send(Fixtures.request(jwt: harness.jwt, body: Array(#"{"n":2}"#.utf8)))
            try await harness.simulator.stop()
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            let decoded = try lines.map { try JSONDecoder().decode(APNSSimulatorRecord.self, from: Data($0.utf8)) }
            #expect(decoded == harness.simulator.records)
            #expect(decoded.map(\.payload) == [#"{"aps":{"alert":"hello"}}"#, #"{"n":2}"#])
        }
    }
}
