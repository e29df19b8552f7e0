import Crypto
import Foundation

/// Checks APNs provider tokens as APNs does: ES256 only, a known `kid`, the team id, a valid signature and an `iat`
/// no more than an hour old. Used by the simulator.
public struct ProviderTokenVerifier: Sendable {
    /// What a verified token says.
    public struct Claims: Sendable, Hashable {
        public var keyID: String
        public var teamID: String
        public var issuedAt: Int64

        public init(keyID: String, teamID: String, issuedAt: Int64) {
            self.keyID = keyID
            self.teamID = teamID
            self.issuedAt = issuedAt
        }
    }

    private let keys: [String: (teamID: String, key: P256.Signing.PublicKey)]
    /// How old a token may be before it is rejected as expired (APNs: one hour).
    public var maximumAge: Int64 = 3600

    /// Creates a verifier that knows `keys`: key id → (team id, public key PEM).
    public init(keys: [String: (teamID: String, publicKeyPEM: String)]) throws(ProviderTokenError) {
        var parsed: [String: (String, P256.Signing.PublicKey)] = [:]
        for (keyID, entry) in keys {
            do {
                parsed[keyID] = (entry.teamID, try P256.Signing.PublicKey(pemRepresentation: entry.publicKeyPEM))
            } catch {
                throw ProviderTokenError(.invalidKey, "the public key for key id \(keyID) is not a P-256 PEM key")
            }
        }
        self.keys = parsed
    }

    /// Verifies `token` at time `now` (seconds since 1970).
    public func verify(_ token: String, now: Int64) throws(ProviderTokenError) -> Claims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any]
        else {
            throw ProviderTokenError(.malformed, "the provider token is not a JWT")
        }
        guard header["alg"] as? String == "ES256" else {
            throw ProviderTokenError(.unsupportedAlgorithm, "the provider token is not signed with ES256")
        }
        guard let keyID = header["kid"] as? String, let known = keys[keyID] else {
            throw ProviderTokenError(.unknownKey, "the provider token names an unknown key id")
        }
        guard let teamID = claims["iss"] as? String, teamID == known.teamID else {
            throw ProviderTokenError(.wrongTeam, "the provider token's iss is not the key's team")
        }
        guard let issuedAt = (claims["iat"] as? NSNumber)?.int64Value else {
            throw ProviderTokenError(.malformed, "the provider token has no iat")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            known.key.isValidSignature(signature, for: Array("\(parts[0]).\(parts[1])".utf8))
        else {
            throw ProviderTokenError(.badSignature, "the provider token's signature does not verify")
        }
        if now - issuedAt > maximumAge {
            throw ProviderTokenError(.expired, "the provider token is more than an hour old")
        }
        if issuedAt - now > 60 {
            throw ProviderTokenError(.issuedInFuture, "the provider token was issued in the future")
        }
        return Claims(keyID: keyID, teamID: teamID, issuedAt: issuedAt)
    }
}
