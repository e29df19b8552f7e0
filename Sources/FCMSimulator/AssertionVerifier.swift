import Crypto
import Foundation
import _CryptoExtras

/// Verifies the JWT a service account signs to get an access token (RS256, `kid`, `iss`, `aud`, `scope`, `iat`,
/// `exp`), as Google's token endpoint does. Its PEM keys are parsed once, at start.
struct AssertionVerifier: Sendable {
    /// A known service account with its parsed key.
    struct Account: Sendable {
        var key: _RSA.Signing.PublicKey
        var projectID: String
        var projectNumber: String?
        var keyID: String?
    }

    /// The longest assertion read; a real one is under 1 KiB.
    static let maximumAssertionLength = 8192
    /// The scopes that grant FCM sends.
    static let acceptedScopes: Set<String> = [
        "https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform",
    ]

    let accounts: [String: Account]

    /// Parses every account's public key; throws on a key that is not an RSA public key in PEM form.
    init(serviceAccounts: [String: FCMSimulatorConfiguration.ServiceAccount]) throws {
        accounts = try serviceAccounts.mapValues { account in
            Account(
                key: try _RSA.Signing.PublicKey(pemRepresentation: account.publicKeyPEM),
                projectID: account.projectID, projectNumber: account.projectNumber, keyID: account.keyID)
        }
    }

    /// The `client_email` (`iss`) of a valid assertion.
    func verify(_ assertion: String, audience: String, now: Int64) throws(OAuthRejection) -> String {
        guard assertion.utf8.count <= Self.maximumAssertionLength else { throw .invalidSignature }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URLDecode(parts[0]),
            let claimsBytes = Self.base64URLDecode(parts[1]), let signature = Self.base64URLDecode(parts[2]),
            let header = try? JSONParser.parse(Array(headerBytes)),
            let claims = try? JSONParser.parse(Array(claimsBytes))
        else { throw .invalidSignature }
        guard header["alg"]?.stringValue == "RS256", let kid = header["kid"]?.stringValue, !kid.isEmpty else {
            throw .invalidSignature
        }
        guard let issuer = claims["iss"]?.stringValue, let account = accounts[issuer] else { throw .accountNotFound }
        if let keyID = account.keyID, keyID != kid { throw .invalidSignature }
        let signed = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        guard
            account.key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5)
        else { throw .invalidSignature }

        guard let issuedAt = Self.seconds(claims["iat"]), let expiresAt = Self.seconds(claims["exp"]),
            issuedAt <= now + 60, expiresAt > now, expiresAt > issuedAt, expiresAt - issuedAt <= 3600
        else { throw .badTimeframe }
        guard claims["aud"]?.stringValue == audience else { throw .badAudience(audience) }
        guard let scope = claims["scope"]?.stringValue, !scope.isEmpty else { throw .missingScope }
        guard scope.split(separator: " ").contains(where: { Self.acceptedScopes.contains(String($0)) }) else {
            throw .invalidScope
        }
        return issuer
    }

    /// A NumericDate claim as whole seconds; nil when absent, not a number or beyond any sensible time.
    static func seconds(_ value: JSONValue?) -> Int64? {
        guard case .number(let literal) = value, literal.utf8.count <= 24, let number = Double(literal),
            abs(number) < 1e15
        else { return nil }
        return Int64(number)
    }

    /// Unpadded base64url (RFC 7515) to bytes.
    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
