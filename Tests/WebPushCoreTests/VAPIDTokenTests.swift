import Crypto
import Foundation
import Synchronization
import Testing

@testable import WebPushCore

@Suite("VAPID tokens and their cache")
struct VAPIDTokenTests {
    static let subject = try! VAPIDSubject("mailto:ops@example.com")

    /// Splits a JWT and checks its ES256 signature with the public key, as a push service does.
    static func verify(_ jwt: String, publicKey: [UInt8]) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try #require(Base64URL.decode(parts[0]))
        let claims = try #require(Base64URL.decode(parts[1]))
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 64, "a JOSE r‖s signature, not DER")
        let key = try P256.Signing.PublicKey(x963Representation: publicKey)
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(key.isValidSignature(ecdsa, for: Array((parts[0] + "." + parts[1]).utf8)))
        return (
            try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]),
            try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any])
        )
    }

    @Test("a token is an ES256 JWT with aud, exp and sub that verifies with the public key")
    func signsAVerifiableJWT() throws {
        let key = VAPIDKey.generate()
        let token = key.sign(audience: "https://web.push.apple.com", subject: Self.subject, expiresAt: 1_800_000_000)
        let (header, claims) = try Self.verify(token.jwt, publicKey: key.publicKey)
        #expect(header["typ"] as? String == "JWT")
        #expect(header["alg"] as? String == "ES256")
        #expect(header.count == 2)
        #expect(claims["aud"] as? String == "https://web.push.apple.com")
        #expect((claims["exp"] as? NSNumber)?.int64Value == 1_800_000_000)
        #expect(claims["sub"] as? String == "mailto:ops@example.com")
        #expect(claims.count == 3)
        #expect(token.expiresAt == 1_800_000_000)
        #expect(token.authorization == "vapid t=\(token.jwt), k=\(key.applicationServerKey)")
        #expect(!"\(token)".contains(token.jwt), "the description never shows the JWT")
    }

    @Test("a token signed by another key does not verify")
    func otherKeyFails() throws {
        let token = VAPIDKey.generate().sign(
            audience: "https://fcm.googleapis.com", subject: Self.subject, expiresAt: 1_800_000_000)
        let parts = token.jwt.split(separator: ".")
        let other = try P256.Signing.PublicKey(x963Representation: VAPIDKey.generate().publicKey)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(!other.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    }

    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let seconds: Mutex<Int64>
        init(_ start: Int64) { seconds = Mutex(start) }
        func now() -> Int64 { seconds.withLock { $0 } }
        func advance(_ by: Int64) { seconds.withLock { $0 += by } }
    }

    @Test("the cache signs once per origin and renews only when less than renewBefore is left")
    func renewsNearExpiry() throws {
        let clock = ManualClock(1_700_000_000)
        let key = VAPIDKey.generate()
        let cache = VAPIDTokenCache(key: key, subject: Self.subject, now: { clock.now() })
        let apple = cache.token(for: "https://web.push.apple.com")
        #expect(apple.expiresAt == 1_700_000_000 + 12 * 3600)
        #expect(cache.signedCount == 1)
        #expect(cache.token(for: "https://web.push.apple.com") == apple)
        let fcm = cache.token(for: "https://fcm.googleapis.com")
        #expect(fcm != apple)
        #expect(
            try Self.verify(fcm.jwt, publicKey: key.publicKey).claims["aud"] as? String
                == "https://fcm.googleapis.com")
        #expect(cache.signedCount == 2)

        clock.advance(11 * 3600)  // exactly renewBefore (3600 s) left: still good
        #expect(cache.token(for: "https://web.push.apple.com") == apple)
        #expect(cache.signedCount == 2)
        clock.advance(1)  // 3599 s left: renewed
        let renewed = cache.token(for: "https://web.push.apple.com")
        #expect(renewed != apple)
        #expect(renewed.expiresAt == clock.now() + 12 * 3600)
        #expect(cache.signedCount == 3)
        #expect(cache.token(for: "https://web.push.apple.com") == renewed)
        #expect(cache.signedCount == 3)

        clock.advance(-2 * 86400)  // the clock went back: exp would be more than a day ahead
        let afterJump = cache.token(for: "https://web.push.apple.com")
        #expect(afterJump.expiresAt == clock.now() + 12 * 3600)
        #expect(cache.signedCount == 4)
    }

    @Test("a lifetime over 24 hours is clamped to 24 hours")
    func lifetimeClamped() {
        let cache = VAPIDTokenCache(
            key: .generate(), subject: Self.subject, lifetime: 48 * 3600, renewBefore: 72 * 3600, now: { 1000 })
        #expect(cache.lifetime == 24 * 3600)
        #expect(cache.renewBefore < cache.lifetime)
        #expect(cache.token(for: "https://example.com").expiresAt == 1000 + 24 * 3600)
        #expect(cache.token(for: "https://example.com").expiresAt == 1000 + 24 * 3600)
        #expect(cache.signedCount == 1)
    }

    @Test("a hundred concurrent callers for one origin get one token, signed once")
    func singleFlight() async throws {
        let cache = VAPIDTokenCache(key: .generate(), subject: Self.subject, now: { 1_700_000_000 })
        let tokens = await withTaskGroup(of: VAPIDToken.self, returning: Set<VAPIDToken>.self) { group in
            for _ in 0..<100 {
                group.addTask { cache.token(for: "https://updates.push.services.mozilla.com") }
            }
            return await group.reduce(into: Set()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(cache.signedCount == 1)
    }
}
