import FCMCore
import Foundation
import Testing
import _CryptoExtras

@Suite struct FCMServiceAccountTests {
    @Test func aGoogleKeyFileParses() throws {
        let account = try FCMServiceAccount(json: TestAccounts.keyFile())
        #expect(account.projectID == "herald-test")
        #expect(account.privateKeyID == "0123456789abcdef0123456789abcdef01234567")
        #expect(account.clientEmail == "herald@herald-test.iam.gserviceaccount.com")
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(account.keySizeInBits == 2048)
        #expect(account.publicKeyPEM == TestAccounts.key.publicKey.pemRepresentation)
    }

    @Test func aPKCS1KeyAndAProjectNumberAreAccepted() throws {
        let account = try FCMServiceAccount(
            json: TestAccounts.keyFile([
                "private_key": TestAccounts.key.pemRepresentation, "project_id": "123456789012",
            ]))
        #expect(account.projectID == "123456789012")
    }

    @Test func anAbsentTokenURIIsGooglesDefault() throws {
        let account = try FCMServiceAccount(json: TestAccounts.keyFile(["token_uri": nil]))
        #expect(account.tokenURI == FCMServiceAccount.defaultTokenURI)
    }

    @Test func theDescriptionNamesOnlyTheProjectAndTheClient() throws {
        let account = try FCMServiceAccount(json: TestAccounts.keyFile())
        #expect(
            "\(account)"
                == "FCMServiceAccount(project: herald-test, client: herald@herald-test.iam.gserviceaccount.com)")
        #expect(!TestAccounts.leaksKey(String(describing: account)))
        #expect(!TestAccounts.leaksKey(String(reflecting: account)))
    }

    @Test(arguments: ["type", "project_id", "private_key_id", "private_key", "client_email"])
    func eachMissingFieldIsNamed(field: String) {
        #expect {
            try FCMServiceAccount(json: TestAccounts.keyFile([field: nil]))
        } throws: { error in
            let error = error as! FCMServiceAccountError
            return error.code == .missingField && error.field == field && "\(error)".contains(field)
        }
    }

    /// Field and its value as a JSON fragment.
    static let invalidFields: [(field: String, json: String)] = [
        ("type", #""authorized_user""#), ("type", "7"),
        ("project_id", #""short""#), ("project_id", #""Upper-Case-1""#), ("project_id", #""under_score""#),
        ("project_id", #""1starts-with-digit""#), ("project_id", #""ends-with-hyphen-""#),
        ("project_id", "\"\(String(repeating: "a", count: 31))\""), ("project_id", #""""#),
        ("private_key_id", #""has\"quote""#), ("private_key_id", "\"\(String(repeating: "a", count: 129))\""),
        ("private_key", #""-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n""#),
        ("private_key", "\"\(P256PEM.text.replacingOccurrences(of: "\n", with: "\\n"))\""),
        ("private_key", "[]"),
        ("client_email", #""not-an-email""#), ("client_email", #""two@at@signs""#),
        ("client_email", #""has space@x.com""#),
        ("token_uri", #""http://oauth2.googleapis.com/token""#), ("token_uri", #""https://""#), ("token_uri", "3"),
    ]

    @Test(arguments: invalidFields)
    func eachInvalidFieldIsNamedWithoutItsValueOrTheKey(field: String, json: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        let file = TestAccounts.keyFile([field: value])
        #expect {
            try FCMServiceAccount(json: file)
        } throws: { error in
            let error = error as! FCMServiceAccountError
            let text = String(describing: error)
            return error.code == .invalidField && error.field == field && text.contains(field)
                && !TestAccounts.leaksKey(text) && !text.contains("not a key")
        }
    }

    @Test func aShortRSAKeyIsNamedAsSuch() throws {
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        #expect {
            try FCMServiceAccount(json: TestAccounts.keyFile(["private_key": small.pkcs8PEMRepresentation]))
        } throws: { error in
            let error = error as! FCMServiceAccountError
            return error.field == "private_key" && "\(error)".contains("1024-bit")
                && !"\(error)".contains(small.pkcs8PEMRepresentation.split(separator: "\n")[1])
        }
    }

    @Test func anOversizedOrMalformedFileIsRefusedAsAWhole() {
        let big = Array(repeating: UInt8(ascii: " "), count: FCMServiceAccount.maximumFileSize + 1)
        #expect { try FCMServiceAccount(json: big) } throws: { ($0 as! FCMServiceAccountError).code == .tooLarge }
        for text in ["", "[]", "{", #"{"type":"service_account",}"#, "\u{FF}"] {
            #expect { try FCMServiceAccount(json: Array(text.utf8)) } throws: {
                ($0 as! FCMServiceAccountError).code == .malformedJSON
            }
        }
    }
}

/// A P-256 key in PEM form: a valid key that is not RSA.
enum P256PEM {
    static let text = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2
        OF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r
        1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G
        -----END PRIVATE KEY-----
        """
}
