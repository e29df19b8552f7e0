import Crypto
import _CryptoExtras

/// Makes the RS256 JWT that a service account exchanges for an access token (the OAuth 2.0 JWT-bearer grant,
/// RFC 7523): header `alg`, `typ`, `kid`; claims `iss`, `scope`, `aud`, `iat`, `exp`.
///
/// Its `description` names the account, never the key.
public struct FCMAssertionSigner: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The scope FCM sends need.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// `exp − iat`: Google accepts at most one hour.
    public static let lifetime: Int64 = 3600

    /// The account whose key signs.
    public let account: FCMServiceAccount

    /// Creates a signer with `account`'s key.
    public init(account: FCMServiceAccount) {
        self.account = account
    }

    /// The exact header, in this order: `{"alg":"RS256","typ":"JWT","kid":…}`.
    var headerJSON: String {
        var out = Array(#"{"alg":"RS256","typ":"JWT","kid":"#.utf8)
        JSON.writeString(account.privateKeyID, to: &out)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The exact claims, in this order: `iss`, `scope`, `aud`, `iat`, `exp`.
    func claimsJSON(issuedAt: Int64) -> String {
        var out = Array(#"{"iss":"#.utf8)
        JSON.writeString(account.clientEmail, to: &out)
        out.append(contentsOf: #","scope":"#.utf8)
        JSON.writeString(Self.scope, to: &out)
        out.append(contentsOf: #","aud":"#.utf8)
        JSON.writeString(account.tokenURI, to: &out)
        out.append(contentsOf: #","iat":\#(issuedAt),"exp":\#(issuedAt + Self.lifetime)}"#.utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// Signs an assertion issued at `issuedAt` (seconds since 1970), valid for `lifetime` seconds.
    ///
    /// The result is a bearer credential for an hour: pass it to the token request and nowhere else.
    public func assertion(issuedAt: Int64) throws(FCMAssertionError) -> String {
        let signingInput =
            Base64URL.encode(headerJSON.utf8) + "." + Base64URL.encode(claimsJSON(issuedAt: issuedAt).utf8)
        do {
            let signature = try account.privateKey.signature(
                for: SHA256.hash(data: Array(signingInput.utf8)), padding: .insecurePKCS1v1_5)
            return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        } catch {
            throw FCMAssertionError(.signingFailed, "could not sign the OAuth assertion for \(account.clientEmail)")
        }
    }

    public var description: String { "FCMAssertionSigner(\(account))" }
    public var debugDescription: String { description }
}
