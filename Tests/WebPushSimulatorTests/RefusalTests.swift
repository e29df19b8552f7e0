import Crypto
import Foundation
import Testing
import WebPushSimulator

/// A request that differs from a valid one in one way, with the answer a real service gives it.
enum Refusal: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case noAuthorization, draftWebPushScheme, noKeyParameter, keyNotAPoint
    case signedByAnotherKey, algHS256, audienceWithTrailingSlash, audienceOfAnotherOrigin
    case noExp, expPassed, expBeyond24Hours, noSub, subAtLocalhost, subWithSpaceAndBrackets, subBareAddress, subHTTP
    case noTTL, negativeTTL, fractionalTTL, ttlBeyondFourWeeks
    case unknownUrgency, topicOf4nPlus1Characters, topicOver32Characters, topicWithADot
    case legacyContentEncoding, noContentEncoding, bodyOver4096Bytes

    var testDescription: String { rawValue }

    /// The status and reason answered.
    var expected: (status: Int, reason: String) {
        switch self {
        case .noAuthorization, .draftWebPushScheme, .noKeyParameter: (401, "MissingAuthorization")
        case .keyNotAPoint: (403, "BadVapidPublicKey")
        case .signedByAnotherKey, .algHS256, .audienceWithTrailingSlash, .audienceOfAnotherOrigin, .noExp, .expPassed,
            .expBeyond24Hours, .noSub, .subAtLocalhost, .subWithSpaceAndBrackets, .subBareAddress, .subHTTP:
            (403, "BadJwtToken")
        case .noTTL: (400, "MissingTTL")
        case .negativeTTL, .fractionalTTL, .ttlBeyondFourWeeks: (400, "BadTTL")
        case .unknownUrgency: (400, "BadUrgency")
        case .topicOf4nPlus1Characters, .topicOver32Characters, .topicWithADot: (400, "BadWebPushTopic")
        case .legacyContentEncoding, .noContentEncoding: (400, "BadContentEncoding")
        case .bodyOver4096Bytes: (413, "PayloadTooLarge")
        }
    }

    /// The header overrides and body of the request.
    func request(_ fixture: SimulatorFixture, to subscription: WebPushSimulator.Subscription) throws
        -> (overrides: [String: String?], body: [UInt8])
    {
        let now = fixture.clock.now
        let sender = fixture.sender
        let body = try TestPushSender.encrypt(
            Array("refused".utf8), p256dh: subscription.p256dh, auth: subscription.auth)
        func claims(_ changes: [String: (any Sendable)?]) throws -> [String: String?] {
            var claims: [String: any Sendable] = [
                "aud": fixture.origin, "exp": Int(now + 3600), "sub": "mailto:a@example.com",
            ]
            for (name, value) in changes { claims[name] = value }
            return ["authorization": sender.authorization(token: try sender.token(claims: claims))]
        }
        switch self {
        case .noAuthorization: return (["authorization": nil], body)
        case .draftWebPushScheme: return (["authorization": "WebPush \(try fixture.token())"], body)
        case .noKeyParameter: return (["authorization": "vapid t=\(try fixture.token())"], body)
        case .keyNotAPoint:
            let key = TestPushSender.base64URL([4] + [UInt8](repeating: 1, count: 64))
            return (["authorization": sender.authorization(token: try fixture.token(), key: key)], body)
        case .signedByAnotherKey:
            let token = try sender.token(
                claims: ["aud": fixture.origin, "exp": Int(now + 3600), "sub": "mailto:a@example.com"],
                signer: P256.Signing.PrivateKey())
            return (["authorization": sender.authorization(token: token)], body)
        case .algHS256:
            let token = try sender.token(
                claims: ["aud": fixture.origin, "exp": Int(now + 3600), "sub": "mailto:a@example.com"],
                header: ["typ": "JWT", "alg": "HS256"])
            return (["authorization": sender.authorization(token: token)], body)
        case .audienceWithTrailingSlash: return (try claims(["aud": fixture.origin + "/"]), body)
        case .audienceOfAnotherOrigin: return (try claims(["aud": "https://web.push.apple.com"]), body)
        case .noExp: return (try claims(["exp": nil]), body)
        case .expPassed: return (try claims(["exp": Int(now)]), body)
        case .expBeyond24Hours: return (try claims(["exp": Int(now + 86_401)]), body)
        case .noSub: return (try claims(["sub": nil]), body)
        case .subAtLocalhost: return (try claims(["sub": "mailto:x@localhost"]), body)
        case .subWithSpaceAndBrackets: return (try claims(["sub": "mailto: <a@example.com>"]), body)
        case .subBareAddress: return (try claims(["sub": "a@example.com"]), body)
        case .subHTTP: return (try claims(["sub": "http://example.com"]), body)
        case .noTTL: return (["ttl": nil], body)
        case .negativeTTL: return (["ttl": "-1"], body)
        case .fractionalTTL: return (["ttl": "1.5"], body)
        case .ttlBeyondFourWeeks: return (["ttl": "2419201"], body)
        case .unknownUrgency: return (["urgency": "urgent"], body)
        case .topicOf4nPlus1Characters: return (["topic": "new_event"], body)
        case .topicOver32Characters: return (["topic": String(repeating: "a", count: 33)], body)
        case .topicWithADot: return (["topic": "news.today"], body)
        case .legacyContentEncoding: return (["content-encoding": "aesgcm"], body)
        case .noContentEncoding: return (["content-encoding": nil], body)
        case .bodyOver4096Bytes:
            let large = try TestPushSender.encrypt(
                Array(repeating: 0x61, count: 3994), p256dh: subscription.p256dh, auth: subscription.auth)
            return ([:], large)
        }
    }
}

@Suite struct RefusalTests {
    @Test(arguments: Refusal.allCases)
    func eachRefusalAnswersItsStatusAndReasonAndRecordsNoMessage(_ refusal: Refusal) async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let (overrides, body) = try refusal.request(fixture, to: subscription)
            let response = try await fixture.post(
                body, to: subscription.endpoint, headers: try fixture.headers(replacing: overrides))
            #expect(response.status == refusal.expected.status)
            #expect(response.reason == refusal.expected.reason)
            #expect(response.headers.first(name: "content-type") == "application/json")
            await fixture.simulator.waitForRequests(count: 1)
            #expect(fixture.simulator.records.isEmpty)
            let request = try #require(fixture.simulator.requests.first)
            #expect(request.status == refusal.expected.status)
            #expect(request.reason == refusal.expected.reason)
            #expect(request.subscriptionID == subscription.id)
            // The same message with valid headers is accepted: the refusal came from the one difference.
            #expect(try await fixture.push("accepted", to: subscription).status == 201)
        }
    }

    @Test(arguments: [
        ["urgency": "very-low"], ["urgency": "low"], ["urgency": "normal"], ["urgency": "high"], ["topic": "newEvent"],
        ["topic": String(repeating: "A-_9", count: 8)], ["ttl": "0"], ["ttl": "2419200"],
        ["content-encoding": "AES128GCM"],
    ])
    func theLimitsThemselvesAreAccepted(_ overrides: [String: String]) async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let response = try await fixture.push("edge", to: subscription, replacing: overrides)
            #expect(response.status == 201)
            #expect(fixture.simulator.records.map(\.text) == ["edge"])
        }
    }

    @Test(arguments: [
        "mailto:ops@example.com", "mailto:first.last+push@mail.example.co.uk", "https://example.com",
        "https://push.example.com:8443/contact",
    ])
    func subjectsAppleAcceptsAreAcceptedWithAnExpiryOfExactly24Hours(_ subject: String) async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let token = try fixture.sender.token(
                claims: ["aud": fixture.origin, "exp": Int(fixture.clock.now + 86_400), "sub": subject])
            #expect(try await fixture.push("ok", to: subscription, token: token).status == 201)
            #expect(fixture.simulator.records.first?.vapidSubject == subject)
        }
    }

    @Test func aKeyTheServiceDoesNotKnowIsRefusedAndAKnownOneAccepted() async throws {
        let known = P256.Signing.PrivateKey()
        try await withSimulator {
            $0.vapidPublicKeys = [TestPushSender.base64URL(known.publicKey.x963Representation)]
        } _: { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let refused = try await fixture.push("x", to: subscription)
            #expect(refused.status == 403)
            #expect(refused.reason == "BadJwtToken")
            let sender = TestPushSender(vapidKey: known)
            let token = try sender.token(audience: fixture.origin, now: fixture.clock.now)
            let accepted = try await fixture.push(
                "y", to: subscription, replacing: ["authorization": sender.authorization(token: token)])
            #expect(accepted.status == 201)
            #expect(fixture.simulator.requests.first?.vapidRefusal == "k is not a key this service accepts")
        }
    }

    @Test func aSubscriptionMadeWithAnotherApplicationServerKeyAnswersVapidPkHashMismatch() async throws {
        try await withSimulator { fixture in
            let other = TestPushSender.base64URL(P256.Signing.PrivateKey().publicKey.x963Representation)
            let bound = fixture.simulator.makeSubscription(applicationServerKey: other)
            let mine = fixture.simulator.makeSubscription(applicationServerKey: fixture.sender.vapidPublicKey)
            let refused = try await fixture.push("x", to: bound)
            #expect(refused.status == 400)
            #expect(refused.reason == "VapidPkHashMismatch")
            #expect(try await fixture.push("y", to: mine).status == 201)
            #expect(fixture.simulator.records.map(\.subscriptionID) == [mine.id])
        }
    }

    @Test func anUnknownIDAnswers404AndAnUnsubscribedOne410() async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            #expect(try await fixture.push("before", to: subscription).status == 201)
            fixture.simulator.unsubscribe(id: subscription.id)
            let gone = try await fixture.push("after", to: subscription)
            #expect(gone.status == 410)
            #expect(gone.reason == "Unregistered")
            var unknown = subscription
            unknown.endpoint = "\(fixture.origin)/push/never-made"
            let missing = try await fixture.push("nobody", to: unknown)
            #expect(missing.status == 404)
            #expect(missing.reason == "UnknownSubscription")
            let offPath = try await fixture.post([], to: "\(fixture.origin)/other/\(subscription.id)", headers: [])
            #expect(offPath.status == 404)
            #expect(fixture.simulator.requests.map(\.status) == [201, 410, 404, 404])
            #expect(fixture.simulator.records.map(\.text) == ["before"])
        }
    }

    @Test func prefixesAnswer410And404WithoutARegistration() async throws {
        try await withSimulator {
            $0.goneIDPrefixes = ["gone-"]
            $0.unknownIDPrefixes = ["lost-"]
        } _: { fixture in
            let keys = fixture.simulator.makeSubscription()
            var statuses: [Int] = []
            for id in ["gone-1", "lost-1", "gone-2"] {
                var target = keys
                target.endpoint = "\(fixture.origin)/push/\(id)"
                statuses.append(try await fixture.push("x", to: target).status)
            }
            #expect(statuses == [410, 404, 410])
            #expect(fixture.simulator.counts["410 Unregistered"] == 2)
            #expect(fixture.simulator.counts["404 UnknownSubscription"] == 1)
        }
    }

    @Test func aMethodOtherThanPOSTIsNotAllowed() async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let response = try await fixture.post([], to: subscription.endpoint, headers: [], method: .GET)
            #expect(response.status == 405)
        }
    }
}
