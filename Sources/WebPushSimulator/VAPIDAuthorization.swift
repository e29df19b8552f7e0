import Crypto
import Foundation

/// The VAPID credentials of one request (RFC 8292 section 3): `Authorization: vapid t=<JWT>, k=<public key>`.
struct VAPIDAuthorization: Sendable {
    /// The JWT, as sent.
    var token: String
    /// `k`, as sent (base64url of the 65-byte uncompressed P-256 key).
    var key: String

    /// The longest `Authorization` header read.
    static let maximumLength = 4096

    /// Parses the header; nil when it is missing, too long or not of the `vapid t=…, k=…` form (the draft
    /// `WebPush <JWT>` form included).
    init?(header: String?) {
        guard let header, header.utf8.count <= Self.maximumLength else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "vapid" else { return nil }
        var token: String?
        var key: String?
        for parameter in parts[1].split(separator: ",") {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            switch name {
            case "t": token = value
            case "k": key = value
            default: continue
            }
        }
        guard let token, let key, !token.isEmpty, !key.isEmpty else { return nil }
        self.token = token
        self.key = key
    }

    /// The SHA-256 of the JWT in lower-case hex: what records keep instead of the token.
    var tokenHash: String {
        SHA256.hash(data: Array(token.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// The claims of a JWT whose ES256 signature verified against `k`.
struct VAPIDClaims: Sendable, Hashable {
    var audience: String
    var expiry: Int64
    var subject: String
}

/// Why a VAPID token was refused: the simulator's own sentence, recorded with the request (never the token).
struct VAPIDRefusal: Error, Sendable, Hashable {
    var detail: String
    init(_ detail: String) { self.detail = detail }
}

/// Verifies the JWT of a VAPID authorization: ES256 signature by `k`, then the claims (RFC 8292, with Apple's rules
/// for `sub`).
enum VAPIDVerifier {
    /// The longest an `exp` may lie ahead of the request: 24 hours (RFC 8292 section 2).
    static let maximumLifetime: Int64 = 86_400

    /// The JWT's header and claims after a valid ES256 signature by `publicKey`; the claims are checked by
    /// ``check(_:audience:now:)``.
    static func verifySignature(token: String, publicKey: P256.Signing.PublicKey) throws(VAPIDRefusal) -> VAPIDClaims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw VAPIDRefusal("the token is not a JWS compact serialisation") }
        guard let headerBytes = Base64URL.decode(parts[0]),
            let header = try? JSONDecoder().decode(JOSEHeader.self, from: Data(headerBytes))
        else { throw VAPIDRefusal("the JWT header is not base64url JSON") }
        guard header.alg == "ES256" else { throw VAPIDRefusal("the JWT alg is not ES256") }
        if let type = header.typ, type.uppercased() != "JWT" { throw VAPIDRefusal("the JWT typ is not JWT") }
        guard let signatureBytes = Base64URL.decode(parts[2]), signatureBytes.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        else { throw VAPIDRefusal("the JWT signature is not a 64-byte ES256 (r‖s) signature") }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard publicKey.isValidSignature(signature, for: signingInput) else {
            throw VAPIDRefusal("the JWT signature does not verify with k")
        }
        guard let claimBytes = Base64URL.decode(parts[1]),
            let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes))
        else { throw VAPIDRefusal("the JWT claims are not base64url JSON of the expected types") }
        guard let audience = claims.aud else { throw VAPIDRefusal("the JWT has no aud") }
        guard let exp = claims.exp, exp.isFinite, abs(exp) < 1e15 else {
            throw VAPIDRefusal("the JWT has no numeric exp")
        }
        guard let subject = claims.sub else { throw VAPIDRefusal("the JWT has no sub") }
        return VAPIDClaims(audience: audience, expiry: Int64(exp.rounded(.down)), subject: subject)
    }

    /// Checks the claims against the request: `aud` is the push service's origin, `exp` is in the future and at most
    /// 24 hours ahead, `sub` passes ``SubjectRules``.
    static func check(_ claims: VAPIDClaims, audience: String, now: Int64) throws(VAPIDRefusal) {
        guard claims.audience == audience else {
            throw VAPIDRefusal("aud is not this push service's origin \(audience)")
        }
        guard claims.expiry > now else { throw VAPIDRefusal("exp has passed") }
        guard claims.expiry <= now + maximumLifetime else { throw VAPIDRefusal("exp is more than 24 hours ahead") }
        guard SubjectRules.isValid(claims.subject) else {
            throw VAPIDRefusal("sub is not a mailto: address or https: URL Apple accepts")
        }
    }

    private struct JOSEHeader: Decodable {
        var alg: String?
        var typ: String?
    }

    private struct Claims: Decodable {
        var aud: String?
        var exp: Double?
        var sub: String?
    }
}
