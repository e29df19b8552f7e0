import FCMCore
import Testing

@Suite struct FCMTokenExchangeTests {
    @Test func theRequestIsTheJWTBearerFormToTheTokenURI() throws {
        let assertion = try FCMAssertionSigner(account: TestAccounts.account).assertion(issuedAt: 1_700_000_000)
        let request = FCMTokenRequest(account: TestAccounts.account, assertion: assertion)
        #expect(request.url == "https://oauth2.googleapis.com/token")
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion)
        #expect(FCMTokenRequest.contentType == "application/x-www-form-urlencoded")
        #expect(!"\(request)".contains(assertion))
        #expect(!String(reflecting: request).contains(assertion))
    }

    @Test func aTokenAnswerIsRead() throws {
        let token = "ya29.c.b0AXv0zTOk-abc_DEF.123"
        let body = #"{"access_token":"\#(token)","expires_in":3599,"token_type":"Bearer"}"#
        let response = try FCMTokenResponse(status: 200, body: Array(body.utf8))
        #expect(response.accessToken == token)
        #expect(response.expiresIn == 3599)
        let accessToken = response.accessToken(receivedAt: 1000)
        #expect(accessToken == FCMAccessToken(value: token, obtainedAt: 1000, expiresAt: 4599))
        #expect(accessToken.authorization == "Bearer " + token)
        #expect(!"\(response)".contains(token))
        #expect(!String(reflecting: response).contains(token))
        #expect(!"\(accessToken)".contains(token))
        #expect(!String(reflecting: accessToken).contains(token))
    }

    static let badAnswers: [String] = [
        #"{"expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"has space","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"caf\u00e9","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"\#(String(repeating: "a", count: 4097))","expires_in":3599,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":0,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":86401,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":"3599","token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":3599.5,"token_type":"Bearer"}"#,
        #"{"access_token":"t","expires_in":3599,"token_type":"mac"}"#,
        #"{"access_token":"t","expires_in":3599}"#,
        #"["t"]"#, "not json",
    ]

    @Test(arguments: badAnswers)
    func aBadTokenAnswerIsMalformed(body: String) {
        #expect { try FCMTokenResponse(status: 200, body: Array(body.utf8)) } throws: {
            ($0 as! FCMTokenError).code == .malformedAnswer
        }
    }

    @Test func theLimitsThemselvesAreAccepted() throws {
        let longest = String(repeating: "a", count: 4096)
        for (token, expiresIn) in [(longest, 86_400), ("t", 1)] {
            let body = #"{"access_token":"\#(token)","expires_in":\#(expiresIn),"token_type":"bearer"}"#
            #expect(try FCMTokenResponse(status: 200, body: Array(body.utf8)).expiresIn == Int64(expiresIn))
        }
    }

    @Test func anOversizedAnswerIsRefusedUnread() {
        let body = Array(repeating: UInt8(ascii: " "), count: FCMTokenResponse.maximumBodySize + 1)
        #expect { try FCMTokenResponse(status: 200, body: body) } throws: {
            ($0 as! FCMTokenError).code == .answerTooLarge
        }
    }

    @Test func anOAuthErrorCarriesErrorAndDescriptionButNeverTheAssertion() throws {
        let assertion = try FCMAssertionSigner(account: TestAccounts.account).assertion(issuedAt: 1_700_000_000)
        let body = #"{"error":"invalid_grant","error_description":"Invalid JWT Signature. \#(assertion)"}"#
        #expect { try FCMTokenResponse(status: 400, body: Array(body.utf8)) } throws: { error in
            let error = error as! FCMTokenError
            let text = "\(error)"
            return error.code == .refused && error.error == "invalid_grant" && error.isCredentialFailure
                && text.contains("invalid_grant") && text.contains("Invalid JWT Signature.")
                && !text.contains(assertion)
                && !text.contains(String(assertion.split(separator: ".")[2]))
        }
    }

    @Test func aTransientErrorIsNotACredentialFailure() {
        #expect { try FCMTokenResponse(status: 503, body: Array("<html>busy</html>".utf8)) } throws: { error in
            let error = error as! FCMTokenError
            return error.code == .unexpectedStatus && error.status == 503 && !error.isCredentialFailure
        }
        let body = #"{"error":"temporarily_unavailable"}"#
        #expect { try FCMTokenResponse(status: 503, body: Array(body.utf8)) } throws: { error in
            let error = error as! FCMTokenError
            return error.code == .refused && !error.isCredentialFailure
        }
    }
}
