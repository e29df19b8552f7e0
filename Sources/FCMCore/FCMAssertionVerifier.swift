import Crypto
import _CryptoExtras

/// Checks an OAuth assertion as Google's token endpoint does: RS256, the expected key id, a signature by the
/// account's key, the FCM scope, and an `exp` at most an hour after `iat` around the current time. Used by tests
/// and `herald doctor`.
public struct FCMAssertionVerifier: Sendable {
    /// What a verified assertion says.
    public struct Claims: Sendable, Hashable {
        /// `kid`.
        public var keyID: String
        /// `iss`: the client email.
        public var issuer: String
        /// `scope`: space-separated scopes.
        public var scope: String
        /// `aud`: the token URI.
        public var audience: String
        /// `iat`, seconds since 1970.
        public var issuedAt: Int64
        /// `exp`, seconds since 1970.
        public var expiresAt: Int64

        /// Creates the claims (for comparisons in tests).
        public init(keyID: String, issuer: String, scope: String, audience: String, issuedAt: Int64, expiresAt: Int64) {
            self.keyID = keyID
            self.issuer = issuer
            self.scope = scope
            self.audience = audience
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
        }
    }

    /// The longest assertion read.
    public static let maximumLength = 8192
    /// How far ahead of `now` an `iat` may be (clock skew).
    public var allowedSkew: Int64 = 60

    private let publicKey: _RSA.Signing.PublicKey
    private let keyID: String?

    /// Creates a verifier for assertions signed by the key whose public half is `publicKeyPEM`; if `keyID` is given
    /// the assertion's `kid` must be it.
    public init(publicKeyPEM: String, keyID: String? = nil) throws(FCMAssertionError) {
        do {
            self.publicKey = try _RSA.Signing.PublicKey(pemRepresentation: publicKeyPEM)
        } catch {
            throw FCMAssertionError(.invalidKey, "the public key is not an RSA key in PEM form")
        }
        self.keyID = keyID
    }

    /// Verifies `assertion` at `now` (seconds since 1970) and returns its claims.
    public func verify(_ assertion: String, now: Int64) throws(FCMAssertionError) -> Claims {
        guard assertion.utf8.count <= Self.maximumLength else {
            throw FCMAssertionError(.malformed, "the assertion is longer than \(Self.maximumLength) bytes")
        }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]), let signatureBytes = Base64URL.decode(parts[2]),
            let header = (try? JSON.parse(headerBytes))?.object, let claims = (try? JSON.parse(claimBytes))?.object
        else {
            throw FCMAssertionError(.malformed, "the assertion is not a JWT")
        }
        guard header["alg"]?.string == "RS256" else {
            throw FCMAssertionError(.unsupportedAlgorithm, "the assertion is not signed with RS256")
        }
        guard let kid = header["kid"]?.string, keyID == nil || kid == keyID else {
            throw FCMAssertionError(.unknownKey, "the assertion names another key id")
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureBytes)
        let digest = SHA256.hash(data: Array("\(parts[0]).\(parts[1])".utf8))
        guard publicKey.isValidSignature(signature, for: digest, padding: .insecurePKCS1v1_5) else {
            throw FCMAssertionError(.badSignature, "the assertion's signature does not verify")
        }
        guard let issuer = claims["iss"]?.string, let scope = claims["scope"]?.string,
            let audience = claims["aud"]?.string, let issuedAt = claims["iat"]?.int64,
            let expiresAt = claims["exp"]?.int64
        else {
            throw FCMAssertionError(.malformed, "the assertion lacks iss, scope, aud, iat or exp")
        }
        let verified = Claims(
            keyID: kid, issuer: issuer, scope: scope, audience: audience, issuedAt: issuedAt, expiresAt: expiresAt)
        try check(verified, now: now)
        return verified
    }

    private func check(_ claims: Claims, now: Int64) throws(FCMAssertionError) {
        guard claims.scope.split(separator: " ").contains(where: { $0 == FCMAssertionSigner.scope }) else {
            throw FCMAssertionError(.invalidClaims, "the assertion's scope does not include firebase.messaging")
        }
        guard claims.expiresAt > claims.issuedAt, claims.expiresAt - claims.issuedAt <= FCMAssertionSigner.lifetime
        else {
            throw FCMAssertionError(.invalidClaims, "the assertion's exp is not within an hour after its iat")
        }
        guard claims.issuedAt - now <= allowedSkew else {
            throw FCMAssertionError(.issuedInFuture, "the assertion was issued in the future")
        }
        guard now < claims.expiresAt else {
            throw FCMAssertionError(.expired, "the assertion has expired")
        }
    }
}
