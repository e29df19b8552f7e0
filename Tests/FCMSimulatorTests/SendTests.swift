import FCMSimulator
import Testing

@Suite struct SendTests {
    typealias Fixture = SimulatorFixture

    @Test func aMessageToATokenIsAcceptedAndRecorded() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let message =
                #"{"token":"\#(Fixture.registrationToken)","data":{"k":"v"},"#
                + #""notification":{"title":"Hi","body":"there"},"android":{"priority":"high","ttl":"3.5s"}}"#
            let response = try await fixture.send(#"{"message":\#(message)}"#, accessToken: accessToken)
            #expect(response.status == 200)
            #expect(response.body == #"{"name":"projects/demo-project/messages/0:1"}"#)
            #expect(response.version == .http2)
            await fixture.simulator.waitForRecords(count: 1)
            let record = try #require(fixture.simulator.records.first)
            #expect(record.target == .token(Fixture.registrationToken))
            #expect(record.messageJSON == message)
            #expect(record.project == "demo-project")
            #expect(record.messageID == "0:1")
            #expect(record.accessToken == accessToken)
            #expect(record.clientEmail == TestServiceAccount.main.clientEmail)
            #expect(record.receivedAt == fixture.clock.now)
        }
    }

    @Test func aMessageToAnFIDIsAccepted() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let response = try await fixture.send(
                #"{"message":{"fid":"\#(Fixture.fid)","data":{"k":"v"}}}"#, accessToken: accessToken)
            #expect(response.status == 200)
            #expect(fixture.simulator.records.map(\.target) == [.fid(Fixture.fid)])
        }
    }

    @Test func topicsConditionsCamelCaseAndTheProjectNumberAreAccepted() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let topic = try await fixture.send(
                #"{"message":{"topic":"news","android":{"collapseKey":"c","directBootOk":true}}}"#,
                accessToken: accessToken)
            let condition = try await fixture.send(
                #"{"message":{"condition":"'a' in topics && ('b' in topics || 'c' in topics)"}}"#,
                accessToken: accessToken, project: "123456789012")
            #expect(topic.status == 200)
            #expect(condition.status == 200)
            #expect(condition.body == #"{"name":"projects/123456789012/messages/0:2"}"#)
            #expect(
                fixture.simulator.records.map(\.target) == [
                    .topic("news"), .condition("'a' in topics && ('b' in topics || 'c' in topics)"),
                ])
        }
    }

    @Test func validateOnlyAnswersAFakeIDAndDeliversNothing() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let response = try await fixture.send(
                #"{"validate_only":true,"message":{"token":"\#(Fixture.registrationToken)"}}"#,
                accessToken: accessToken)
            #expect(response.status == 200)
            #expect(response.body == #"{"name":"projects/demo-project/messages/fake_message_id"}"#)
            #expect(fixture.simulator.records.isEmpty)
            #expect(fixture.simulator.requests.last?.validateOnly == true)
        }
    }

    @Test func aMissingUnknownOrExpiredAccessTokenIsUnauthenticated() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let body = #"{"message":{"token":"\#(Fixture.registrationToken)"}}"#
            let missing = try await fixture.send(body, accessToken: nil)
            let unknown = try await fixture.send(body, accessToken: "ya29.unknown")
            fixture.clock.advance(bySeconds: 3598)
            let stillValid = try await fixture.send(body, accessToken: accessToken)
            fixture.clock.advance(bySeconds: 1)
            let expired = try await fixture.send(body, accessToken: accessToken)
            #expect(stillValid.status == 200)
            let expected =
                #"{"error":{"code":401,"message":"Request had invalid authentication credentials. "#
                + #"Expected OAuth 2 access token, login cookie or other valid authentication credential. "#
                + #"See https://developers.google.com/identity/sign-in/web/devconsole-project.","#
                + #""status":"UNAUTHENTICATED"}}"#
            for response in [missing, unknown, expired] {
                #expect(response.status == 401)
                #expect(response.body == expected)
                #expect(response.headers.first(name: "www-authenticate")?.hasPrefix("Bearer") == true)
            }
            #expect(fixture.simulator.requests.map(\.status) == [200, 401, 401, 200, 401])
        }
    }

    @Test func revokedAccessTokensAreUnauthenticated() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            fixture.simulator.revokeAccessTokens()
            let response = try await fixture.send(
                #"{"message":{"token":"\#(Fixture.registrationToken)"}}"#, accessToken: accessToken)
            #expect(response.status == 401)
        }
    }

    @Test func anAccountOfAnotherProjectIsDenied() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken(for: .otherProject)
            let response = try await fixture.send(
                #"{"message":{"token":"\#(Fixture.registrationToken)"}}"#, accessToken: accessToken)
            #expect(response.status == 403)
            #expect(
                response.body
                    == #"{"error":{"code":403,"message":"Permission 'cloudmessaging.messages.create' denied on "#
                    + #"resource '//cloudresourcemanager.googleapis.com/projects/demo-project' (or it may not exist).","#
                    + #""status":"PERMISSION_DENIED"}}"#)
        }
    }

    @Test func otherPathsAreNotFoundAndOtherMethodsNotAllowed() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let get = try await fixture.request(
                "/v1/projects/demo-project/messages:send", method: .GET, body: nil,
                headers: [("authorization", "Bearer \(accessToken)")])
            let legacy = try await fixture.request("/fcm/send", body: "{}")
            let batch = try await fixture.request("/v1/projects/demo-project/messages:sendAll", body: "{}")
            #expect([get.status, legacy.status, batch.status] == [405, 404, 404])
        }
    }

    @Test(arguments: TokenFate.allCases)
    func aTokensFateGivesFCMsAnswer(_ fate: TokenFate) async throws {
        try await withSimulator {
            $0.deadTokens = [TokenFate.dead.token]
            $0.deadTokenPrefixes = ["deadprefix"]
            $0.foreignTokenPrefixes = ["foreign"]
            $0.thirdPartyAuthErrorPrefixes = ["apnsbroken"]
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            let response = try await fixture.send(
                #"{"message":{"token":"\#(fate.token)"}}"#, accessToken: accessToken)
            #expect(response.status == fate.status)
            #expect(response.body == fate.body)
            #expect(fixture.simulator.records.isEmpty)
            let request = try #require(fixture.simulator.requests.last)
            #expect(request.target == .token(fate.token))
            #expect(request.errorCode == fate.errorCode)
        }
    }

    @Test func aDeadTokenFailsADryRunButAThirdPartyErrorDoesNot() async throws {
        try await withSimulator {
            $0.deadTokenPrefixes = ["deadprefix"]
            $0.thirdPartyAuthErrorPrefixes = ["apnsbroken"]
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            let dead = try await fixture.send(
                #"{"message":{"token":"\#(TokenFate.deadByPrefix.token)"},"validateOnly":true}"#,
                accessToken: accessToken)
            let thirdParty = try await fixture.send(
                #"{"message":{"token":"\#(TokenFate.thirdPartyAuthError.token)"},"validateOnly":true}"#,
                accessToken: accessToken)
            #expect(dead.status == 404)
            #expect(thirdParty.status == 200)
        }
    }

    @Test func sendsAlsoWorkOverHTTP1() async throws {
        try await withSimulator(httpVersion: .http1Only) { fixture in
            let accessToken = try await fixture.accessToken()
            let accepted = try await fixture.send(
                #"{"message":{"token":"\#(Fixture.registrationToken)"}}"#, accessToken: accessToken)
            let refused = try await fixture.send(#"{"message":{}}"#, accessToken: accessToken)
            #expect(accepted.status == 200)
            #expect(accepted.version == .http1_1)
            #expect(refused.status == 400)
            #expect(fixture.simulator.requests.map(\.httpVersion) == ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1"])
        }
    }
}
