import Crypto
import Foundation
import Testing
import WebPushSimulator

@Suite struct PushTests {
    @Test func aValidMessageIsDecryptedAndRecordedWithItsHeaders() async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            #expect(subscription.endpoint == "\(fixture.origin)/push/\(subscription.id)")
            #expect(TestPushSender.decodeBase64URL(subscription.p256dh)?.count == 65)
            #expect(TestPushSender.decodeBase64URL(subscription.auth)?.count == 16)
            let token = try fixture.token()
            let response = try await fixture.push(
                #"{"title":"Hello"}"#, to: subscription, token: token,
                replacing: ["urgency": "high", "topic": "scores", "ttl": "3600"])
            #expect(response.status == 201)
            #expect(response.version == .http2)
            #expect(response.headers.first(name: "ttl") == "3600")
            #expect(response.headers.first(name: "location") == "\(fixture.origin)/message/m1")

            await fixture.simulator.waitForRecords(count: 1)
            let record = try #require(fixture.simulator.records.first)
            #expect(record.subscriptionID == subscription.id)
            #expect(record.text == #"{"title":"Hello"}"#)
            #expect(record.decryptionFailure == nil)
            #expect(record.ttl == 3600)
            #expect(record.urgency == "high")
            #expect(record.topic == "scores")
            #expect(record.vapidSubject == "mailto:push@example.com")
            #expect(record.vapidAudience == fixture.origin)
            #expect(record.vapidExpiry == fixture.clock.now + 3600)
            #expect(
                record.vapidTokenHash
                    == SHA256.hash(data: Array(token.utf8)).map { String(format: "%02x", $0) }.joined())
            #expect(record.vapidPublicKey == fixture.sender.vapidPublicKey)
            #expect(record.receivedAt == fixture.clock.now)
            #expect(record.httpVersion == "HTTP/2")
            #expect(fixture.simulator.undecryptableCount == 0)
            #expect(fixture.simulator.requests.map(\.status) == [201])
        }
    }

    /// RFC 8291 section 5 and Appendix A: the user agent's private key, the auth secret and the encrypted body as the
    /// RFC publishes them, posted with a VAPID token of today.
    @Test func theRFC8291AppendixABodyDecryptsToTheRFCsPlaintext() async throws {
        try await withSimulator { fixture in
            let privateKey = try P256.KeyAgreement.PrivateKey(
                rawRepresentation: try #require(TestPushSender.decodeBase64URL(RFC8291.receiverPrivateKey)))
            let subscription = fixture.simulator.addSubscription(
                id: "rfc8291", privateKey: privateKey,
                auth: try #require(TestPushSender.decodeBase64URL(RFC8291.authSecret)))
            #expect(subscription.p256dh == RFC8291.receiverPublicKey)
            let body = try #require(TestPushSender.decodeBase64URL(RFC8291.body))
            let response = try await fixture.post(
                body, to: subscription.endpoint, headers: try fixture.headers())
            #expect(response.status == 201)
            await fixture.simulator.waitForRecords(count: 1)
            #expect(fixture.simulator.records.first?.text == RFC8291.plaintext)
            #expect(fixture.simulator.undecryptableCount == 0)
        }
    }

    @Test func paddingIsStrippedAndAnEmptyPayloadDecrypts() async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription(id: "padded")
            for (text, padding) in [("padded", 200), ("", 0)] {
                let body = try TestPushSender.encrypt(
                    Array(text.utf8), p256dh: subscription.p256dh, auth: subscription.auth, padding: padding)
                let response = try await fixture.post(body, to: subscription.endpoint, headers: try fixture.headers())
                #expect(response.status == 201)
            }
            await fixture.simulator.waitForRecords(count: 2)
            #expect(fixture.simulator.records.map(\.plaintext) == [Array("padded".utf8), []])
        }
    }

    @Test(arguments: [
        BadBody.otherKeys, .otherAuth, .twoRecords, .lastRecordDelimiter, .truncated,
    ])
    func aBodyThatDoesNotDecryptIsAnswered201ButRecordedWithoutPlaintext(_ bad: BadBody) async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let response = try await fixture.post(
                try bad.body(for: subscription), to: subscription.endpoint, headers: try fixture.headers())
            #expect(response.status == 201)
            await fixture.simulator.waitForRecords(count: 1)
            let record = try #require(fixture.simulator.records.first)
            #expect(record.plaintext == nil)
            #expect(record.decryptionFailure != nil)
            #expect(fixture.simulator.undecryptableCount == 1)
        }
    }

    /// Forty messages at once over HTTP/2 (multiplexed on AsyncHTTPClient's connection) and over HTTP/1.1 (its
    /// keep-alive pool): every answer arrives, and every message decrypts for its own subscription. (An empty DATA
    /// frame before END_STREAM once lost answers here.)
    @Test(arguments: [true, false])
    func concurrentMessagesAreEachAnsweredAndDecryptedForTheirSubscription(http2: Bool) async throws {
        try await withSimulator(httpVersion: http2 ? .automatic : .http1Only) { fixture in
            let subscriptions = (0..<5).map { fixture.simulator.makeSubscription(id: "s\($0)") }
            let token = try fixture.token()
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        try await fixture.push("m\(index)", to: subscriptions[index % 5], token: token)
                    }
                }
                return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
            }
            #expect(answers.map(\.status) == Array(repeating: 201, count: 40))
            #expect(answers.allSatisfy { $0.version == (http2 ? .http2 : .http1_1) })
            await fixture.simulator.waitForRecords(count: 40)
            let records = fixture.simulator.records
            #expect(Set(records.compactMap(\.text)) == Set((0..<40).map { "m\($0)" }))
            for record in records {
                let index = record.text.flatMap { Int($0.dropFirst()) }
                #expect(index.map { "s\($0 % 5)" } == record.subscriptionID)
            }
            #expect(fixture.simulator.distinctVAPIDTokens(audience: fixture.origin) == 1)
        }
    }

    @Test func http1KeepAliveIsServed() async throws {
        try await withSimulator(httpVersion: .http1Only) { fixture in
            let subscription = fixture.simulator.makeSubscription()
            for text in ["one", "two"] {
                let response = try await fixture.push(text, to: subscription)
                #expect(response.status == 201)
                #expect(response.version == .http1_1)
                #expect(response.headers.first(name: "connection") != "close")
            }
            await fixture.simulator.waitForRecords(count: 2)
            #expect(fixture.simulator.records.map(\.text) == ["one", "two"])
            #expect(fixture.simulator.records.allSatisfy { $0.httpVersion == "HTTP/1.1" })
        }
    }

    @Test func distinctVAPIDTokensAreCountedPerAudience() async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let first = try fixture.token()
            for _ in 0..<3 { #expect(try await fixture.push("a", to: subscription, token: first).status == 201) }
            fixture.clock.advance(bySeconds: 3600 - 60)
            let second = try fixture.token()
            #expect(try await fixture.push("b", to: subscription, token: second).status == 201)
            // A refused token is not counted.
            let foreign = try fixture.sender.token(audience: "https://push.example.net", now: fixture.clock.now)
            #expect(try await fixture.push("c", to: subscription, token: foreign).status == 403)
            #expect(fixture.simulator.distinctVAPIDTokens(audience: fixture.origin) == 2)
            #expect(fixture.simulator.distinctVAPIDTokens(audience: "https://push.example.net") == 0)
            #expect(Set(fixture.simulator.records.map(\.vapidTokenHash)).count == 2)
        }
    }

    @Test func theRecordFileHoldsAcceptedMessagesWithoutTheJWT() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("webpush-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withSimulator {
            $0.recordFile = path
        } _: { fixture in
            let subscription = fixture.simulator.makeSubscription(id: "rec")
            let token = try fixture.token()
            _ = try await fixture.push("hello", to: subscription, token: token, replacing: ["topic": "t1"])
            _ = try await fixture.push("refused", to: subscription, token: token, replacing: ["ttl": nil])
            await fixture.simulator.waitForRequests(count: 2)
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.allSatisfy { !$0.contains(token) && !$0.contains(token.split(separator: ".")[2]) })
            let firstLine = try #require(lines.first)
            let line = try #require(try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any])
            #expect(line["id"] as? String == "rec")
            #expect(line["plaintext"] as? String == "hello")
            #expect(line["ttl"] as? Int == 60)
            #expect(line["topic"] as? String == "t1")
            #expect(line["urgency"] is NSNull)
        }
    }

    @Test func idsOfAnAnyKeysPrefixAreCheckedButNotDecrypted() async throws {
        try await withSimulator {
            $0.acceptAnyKeysForPrefixes = ["bench-"]
        } _: { fixture in
            let stranger = fixture.simulator.makeSubscription(id: "unused")
            let body = try TestPushSender.encrypt(Array("x".utf8), p256dh: stranger.p256dh, auth: stranger.auth)
            let endpoint = "\(fixture.origin)/push/bench-17"
            #expect(try await fixture.post(body, to: endpoint, headers: try fixture.headers()).status == 201)
            let noTTL = try await fixture.post(
                body, to: endpoint, headers: try fixture.headers(replacing: ["ttl": nil]))
            #expect(noTTL.status == 400)
            let noVAPID = try await fixture.post(
                body, to: endpoint, headers: try fixture.headers(replacing: ["authorization": nil]))
            #expect(noVAPID.status == 401)
            #expect(
                try await fixture.post(body, to: "\(fixture.origin)/push/other-1", headers: try fixture.headers())
                    .status == 404)
            await fixture.simulator.waitForRequests(count: 4)
            #expect(fixture.simulator.records.map(\.subscriptionID) == ["bench-17"])
            #expect(fixture.simulator.records.first?.plaintext == nil)
            #expect(fixture.simulator.records.first?.decryptionFailure == nil)
            #expect(fixture.simulator.undecryptableCount == 0)
        }
    }
}

/// Bodies a real service would accept (it cannot decrypt) that a browser would drop.
enum BadBody: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case otherKeys, otherAuth, twoRecords, lastRecordDelimiter, truncated

    var testDescription: String { rawValue }

    func body(for subscription: WebPushSimulator.Subscription) throws -> [UInt8] {
        let text = Array("for someone else".utf8)
        switch self {
        case .otherKeys:
            let other = P256.KeyAgreement.PrivateKey().publicKey.x963Representation
            return try TestPushSender.encrypt(text, p256dh: TestPushSender.base64URL(other), auth: subscription.auth)
        case .otherAuth:
            return try TestPushSender.encrypt(
                text, p256dh: subscription.p256dh, auth: TestPushSender.base64URL([UInt8](repeating: 7, count: 16)))
        case .twoRecords:
            // rs smaller than the record: the body would need a second record, which RFC 8291 forbids.
            return try TestPushSender.encrypt(
                text, p256dh: subscription.p256dh, auth: subscription.auth, recordSize: 18)
        case .lastRecordDelimiter:
            return try TestPushSender.encrypt(text, p256dh: subscription.p256dh, auth: subscription.auth, delimiter: 1)
        case .truncated:
            return Array(
                try TestPushSender.encrypt(text, p256dh: subscription.p256dh, auth: subscription.auth).prefix(90))
        }
    }
}
