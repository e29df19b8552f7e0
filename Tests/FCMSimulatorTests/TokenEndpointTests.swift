import FCMSimulator
import Testing

@Suite struct TokenEndpointTests {
    @Test func aValidAssertionMintsAnHourLongBearerToken() async throws {
        try await withSimulator { fixture in
            let response = try await fixture.postToken(assertion: fixture.assertion())
            #expect(response.status == 200)
            #expect(response.version == .http2)
            #expect((response.json["access_token"] as? String)?.hasPrefix("ya29.") == true)
            #expect(response.json["expires_in"] as? Int == 3599)
            #expect(response.json["token_type"] as? String == "Bearer")
            #expect(fixture.simulator.mintCount(for: TestServiceAccount.main.clientEmail) == 1)
            #expect(fixture.simulator.mintCount(for: TestServiceAccount.otherProject.clientEmail) == 0)
            let request = try #require(fixture.simulator.requests.first)
            #expect(request.endpoint == .token)
            #expect(request.status == 200)
            #expect(request.receivedAt == fixture.clock.now)
        }
    }

    @Test func eachMintGivesANewTokenAndIsCountedPerAccount() async throws {
        try await withSimulator { fixture in
            let first = try await fixture.accessToken()
            let second = try await fixture.accessToken()
            _ = try await fixture.accessToken(for: .otherProject)
            #expect(first != second)
            #expect(fixture.simulator.mintCount(for: TestServiceAccount.main.clientEmail) == 2)
            #expect(fixture.simulator.mintCount(for: TestServiceAccount.otherProject.clientEmail) == 1)
        }
    }

    @Test func theLifetimeIsConfigurable() async throws {
        try await withSimulator {
            $0.accessTokenLifetime = 120
        } _: { fixture in
            let response = try await fixture.postToken(assertion: fixture.assertion())
            #expect(response.json["expires_in"] as? Int == 120)
        }
    }

    @Test(arguments: BadAssertion.allCases)
    func aBadAssertionIsRefusedWithGooglesError(_ bad: BadAssertion) async throws {
        try await withSimulator { fixture in
            let assertion = bad.assertion(audience: fixture.simulator.tokenAudience, now: fixture.clock.now)
            let response = try await fixture.postToken(assertion: assertion)
            #expect(response.status == 400)
            #expect(response.body == bad.expectedBody(audience: fixture.simulator.tokenAudience))
            #expect(fixture.simulator.mintCount(for: TestServiceAccount.main.clientEmail) == 0)
            #expect(fixture.simulator.requests.map(\.errorCode) == [bad.expectedError])
        }
    }

    @Test func theCloudPlatformScopeAndAConfiguredAudienceAreAccepted() async throws {
        let google = "https://oauth2.googleapis.com/token"
        try await withSimulator {
            $0.tokenAudience = google
        } _: { fixture in
            #expect(fixture.simulator.tokenAudience == google)
            let assertion = TestServiceAccount.main.assertion(
                audience: google, issuedAt: fixture.clock.now,
                scope: "openid https://www.googleapis.com/auth/cloud-platform")
            let response = try await fixture.postToken(assertion: assertion)
            #expect(response.status == 200)
        }
    }

    @Test func theDefaultAudienceIsTheEndpointsURL() async throws {
        try await withSimulator { fixture in
            #expect(fixture.simulator.tokenAudience == "https://127.0.0.1:\(fixture.port)/token")
        }
    }

    @Test func aWrongGrantTypeIsUnsupported() async throws {
        try await withSimulator { fixture in
            let response = try await fixture.postToken("grant_type=client_credentials&assertion=x")
            #expect(response.status == 400)
            #expect(
                response.body
                    == #"{"error":"unsupported_grant_type","error_description":"Invalid grant_type: client_credentials"}"#
            )
        }
    }

    @Test func aMissingAssertionOrAWrongContentTypeIsAnInvalidRequest() async throws {
        try await withSimulator { fixture in
            let missing = try await fixture.postToken(
                "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer")
            #expect(missing.status == 400)
            #expect(
                missing.body
                    == #"{"error":"invalid_request","error_description":"Missing required parameter: assertion"}"#)
            let json = try await fixture.postToken(#"{"assertion":"x"}"#, contentType: "application/json")
            #expect(json.status == 400)
            #expect(json.json["error"] as? String == "invalid_request")
        }
    }

    @Test func theTokenEndpointAlsoSpeaksHTTP1() async throws {
        try await withSimulator(httpVersion: .http1Only) { fixture in
            let response = try await fixture.postToken(assertion: fixture.assertion())
            #expect(response.status == 200)
            #expect(response.version == .http1_1)
            let again = try await fixture.postToken(assertion: fixture.assertion())
            #expect(again.status == 200)
            #expect(fixture.simulator.requests.map(\.httpVersion) == ["HTTP/1.1", "HTTP/1.1"])
        }
    }

    @Test func otherMethodsAndPathsAreRefused() async throws {
        try await withSimulator { fixture in
            let get = try await fixture.request("/token", method: .GET, body: nil)
            let elsewhere = try await fixture.request("/oauth2/v4/token", body: "x")
            #expect(get.status == 405)
            #expect(elsewhere.status == 404)
            #expect(fixture.simulator.requests.map(\.endpoint) == [.token, .other])
        }
    }
}
