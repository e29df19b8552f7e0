import FCMCore
import Foundation
import Testing
import _CryptoExtras

@Suite struct FCMAssertionTests {
    static let signer = FCMAssertionSigner(account: TestAccounts.account)

    static func verifier(keyID: String? = TestAccounts.account.privateKeyID) throws -> FCMAssertionVerifier {
        try FCMAssertionVerifier(publicKeyPEM: TestAccounts.account.publicKeyPEM, keyID: keyID)
    }

    /// Decodes unpadded base64url the test's own way (not through the code under test).
    static func decode(_ part: Substring) -> Data? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    @Test func theAssertionHasTheExactHeaderAndClaimsAndASignatureThatVerifies() throws {
        let assertion = try Self.signer.assertion(issuedAt: 1_700_000_000)
        #expect(!assertion.contains("="))
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try #require(Self.decode(parts[0]))
        let claims = try #require(Self.decode(parts[1]))
        let signature = try #require(Self.decode(parts[2]))
        #expect(
            String(decoding: header, as: UTF8.self)
                == #"{"alg":"RS256","typ":"JWT","kid":"0123456789abcdef0123456789abcdef01234567"}"#)
        #expect(
            String(decoding: claims, as: UTF8.self)
                == #"{"iss":"herald@herald-test.iam.gserviceaccount.com","#
                + #""scope":"https://www.googleapis.com/auth/firebase.messaging","#
                + #""aud":"https://oauth2.googleapis.com/token","iat":1700000000,"exp":1700003600}"#)
        #expect(signature.count == 256)
        let valid = TestAccounts.key.publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: Data("\(parts[0]).\(parts[1])".utf8),
            padding: .insecurePKCS1v1_5)
        #expect(valid)
    }

    @Test func theVerifierReturnsTheClaims() throws {
        let assertion = try Self.signer.assertion(issuedAt: 1_700_000_000)
        let claims = try Self.verifier().verify(assertion, now: 1_700_000_010)
        #expect(
            claims
                == .init(
                    keyID: "0123456789abcdef0123456789abcdef01234567",
                    issuer: "herald@herald-test.iam.gserviceaccount.com", scope: FCMAssertionSigner.scope,
                    audience: "https://oauth2.googleapis.com/token", issuedAt: 1_700_000_000, expiresAt: 1_700_003_600))
    }

    @Test func theAudienceIsTheAccountsTokenURI() throws {
        let account = FCMServiceAccount(
            projectID: "herald-test", privateKeyID: "k1", clientEmail: "a@b.c",
            tokenURI: "https://sim.local:8443/token",
            privateKey: TestAccounts.key)
        let assertion = try FCMAssertionSigner(account: account).assertion(issuedAt: 100)
        #expect(try Self.verifier(keyID: nil).verify(assertion, now: 100).audience == "https://sim.local:8443/token")
    }

    @Test func anotherKeysSignatureAndATamperedAssertionFail() throws {
        let other = FCMServiceAccount(
            projectID: "herald-test", privateKeyID: TestAccounts.account.privateKeyID,
            clientEmail: TestAccounts.account.clientEmail, privateKey: TestAccounts.otherKey)
        let forged = try FCMAssertionSigner(account: other).assertion(issuedAt: 100)
        #expect { try Self.verifier().verify(forged, now: 100) } throws: {
            ($0 as! FCMAssertionError).code == .badSignature
        }
        let genuine = try Self.signer.assertion(issuedAt: 100)
        var parts = genuine.split(separator: ".").map(String.init)
        parts[1] = Data(#"{"iss":"x","scope":"s","aud":"a","iat":100,"exp":200}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        #expect { try Self.verifier().verify(parts.joined(separator: "."), now: 100) } throws: {
            ($0 as! FCMAssertionError).code == .badSignature
        }
    }

    @Test func timeAndKeyRulesAreNamed() throws {
        let assertion = try Self.signer.assertion(issuedAt: 1000)
        let cases: [(now: Int64, verifier: FCMAssertionVerifier, code: FCMAssertionError.Code)] = [
            (4600, try Self.verifier(), .expired),
            (900, try Self.verifier(), .issuedInFuture),
            (1000, try Self.verifier(keyID: "another"), .unknownKey),
        ]
        for (now, verifier, code) in cases {
            #expect { try verifier.verify(assertion, now: now) } throws: { ($0 as! FCMAssertionError).code == code }
        }
        #expect(try Self.verifier().verify(assertion, now: 4599).issuedAt == 1000)
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!!.???.***", "W10.e30.", String(repeating: "a", count: 9000)])
    func malformedAssertionsAreRefused(text: String) throws {
        #expect { try Self.verifier().verify(text, now: 0) } throws: { ($0 as! FCMAssertionError).code == .malformed }
    }

    @Test func anAssertionWithoutRS256IsRefusedBeforeItsSignature() throws {
        // {"alg":"none"}.{}. — the classic unsigned JWT.
        #expect { try Self.verifier().verify("eyJhbGciOiJub25lIn0.e30.", now: 0) } throws: {
            ($0 as! FCMAssertionError).code == .unsupportedAlgorithm
        }
    }

    @Test func theSignerDescriptionHidesTheKey() {
        #expect(!TestAccounts.leaksKey("\(Self.signer)"))
        #expect("\(Self.signer)".contains("herald-test"))
    }
}
