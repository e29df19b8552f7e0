import Crypto

/// A signed VAPID token (RFC 8292) and the `Authorization` header that carries it. `description` shows only its
/// expiry: the JWT is a credential, never logged.
public struct VAPIDToken: Sendable, Hashable, CustomStringConvertible {
    /// The JWT (`header.claims.signature`, ES256).
    public let jwt: String
    /// The `exp` claim, seconds since 1970.
    public let expiresAt: Int64
    /// `vapid t=<jwt>, k=<applicationServerKey>`: the request's `Authorization` header.
    public let authorization: String

    /// A token signed elsewhere, with the signing key's public key in base64url.
    public init(jwt: String, expiresAt: Int64, applicationServerKey: String) {
        self.jwt = jwt
        self.expiresAt = expiresAt
        self.authorization = "vapid t=" + jwt + ", k=" + applicationServerKey
    }

    /// `VAPIDToken(exp: <expiresAt>)`: never the JWT.
    public var description: String { "VAPIDToken(exp: \(expiresAt))" }
}

extension VAPIDKey {
    /// The JOSE header of every token: `{"typ":"JWT","alg":"ES256"}`, base64url.
    static let encodedHeader = Base64URL.encode(#"{"typ":"JWT","alg":"ES256"}"#.utf8)

    /// Signs a token for one push service.
    ///
    /// - Parameters:
    ///   - audience: the `aud` claim: the origin of the subscription's endpoint (`https://web.push.apple.com`, no
    ///     path, no trailing slash), ``WebPushEndpoint/origin``.
    ///   - subject: the `sub` claim.
    ///   - expiresAt: the `exp` claim, seconds since 1970; push services refuse one more than 24 hours ahead.
    /// - Returns: the token, signed ES256 with a JOSE (raw `r ‖ s`, 64-byte) signature.
    public func sign(audience: String, subject: VAPIDSubject, expiresAt: Int64) -> VAPIDToken {
        var claims = JSONWriter(capacity: 128)
        claims.beginObject()
        claims.string("aud", audience)
        claims.integer("exp", Int(expiresAt))
        claims.string("sub", subject.value)
        claims.endObject()
        let signingInput = Self.encodedHeader + "." + Base64URL.encode(claims.bytes)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try privateKey.signature(for: Array(signingInput.utf8))
        } catch {
            // BoringSSL fails ECDSA with a valid P-256 key only when it cannot allocate.
            preconditionFailure("ES256 signing with a valid P-256 key failed")
        }
        return VAPIDToken(
            jwt: signingInput + "." + Base64URL.encode(signature.rawRepresentation), expiresAt: expiresAt,
            applicationServerKey: applicationServerKey)
    }
}
