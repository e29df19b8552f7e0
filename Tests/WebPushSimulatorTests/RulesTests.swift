import Crypto
import Testing

@testable import WebPushSimulator

/// The simulator's own rules without a server: decryption of the RFC's body, and the header and subject tables.
@Suite struct RulesTests {
    @Test func theRFC8291BodyDecryptsWithTheRFCsKeys() throws {
        let privateKey = try P256.KeyAgreement.PrivateKey(
            rawRepresentation: try #require(Base64URL.decode(RFC8291.receiverPrivateKey)))
        #expect(Base64URL.encode(privateKey.publicKey.x963Representation) == RFC8291.receiverPublicKey)
        let plaintext = try PushDecryption.decrypt(
            try #require(Base64URL.decode(RFC8291.body)), privateKey: privateKey,
            auth: try #require(Base64URL.decode(RFC8291.authSecret)))
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8291.plaintext)
    }

    @Test func aFlippedCiphertextByteFailsAuthentication() throws {
        let privateKey = try P256.KeyAgreement.PrivateKey(
            rawRepresentation: try #require(Base64URL.decode(RFC8291.receiverPrivateKey)))
        var body = try #require(Base64URL.decode(RFC8291.body))
        body[90] ^= 1
        #expect(throws: PushDecryption.Failure.self) {
            try PushDecryption.decrypt(
                body, privateKey: privateKey, auth: try #require(Base64URL.decode(RFC8291.authSecret)))
        }
    }

    @Test(arguments: [
        ("mailto:ops@example.com", true), ("mailto:a.b+c@sub.example.org", true), ("https://example.com", true),
        ("https://example.com:8443/a?b", true), ("mailto:x@localhost", false), ("mailto: <a@example.com>", false),
        ("mailto:<a@example.com>", false), ("a@example.com", false), ("mailto:a@example", false),
        ("https://localhost", false), ("http://example.com", false), ("https://", false),
        ("mailto:@example.com", false),
        ("https://exa mple.com", false), ("", false),
    ])
    func subjects(_ subject: String, valid: Bool) {
        #expect(SubjectRules.isValid(subject) == valid)
    }

    @Test(arguments: [
        ("0", 0), ("60", 60), ("2419200", 2_419_200), ("2419201", nil), ("-1", nil), ("+1", nil), (" 1", nil),
        ("1.0", nil), ("", nil), ("99999999999999999999", nil),
    ])
    func ttls(_ value: String, ttl: Int?) {
        #expect(HeaderRules.ttl(value) == ttl)
    }

    @Test(arguments: [
        ("newEvent", true), ("a", false), ("ab", true), ("new_event", false), ("news.today", false),
        (String(repeating: "x", count: 32), true), (String(repeating: "x", count: 33), false), ("", false),
    ])
    func topics(_ topic: String, valid: Bool) {
        #expect(HeaderRules.isValidTopic(topic) == valid)
    }
}
