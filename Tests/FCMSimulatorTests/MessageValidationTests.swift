import FCMSimulator
import Testing

@Suite struct MessageValidationTests {
    @Test(arguments: InvalidMessage.all)
    func anInvalidMessageGetsFCMsExactError(_ invalid: InvalidMessage) async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let response = try await fixture.send(invalid.body, accessToken: accessToken)
            #expect(response.status == invalid.status)
            #expect(response.body == invalid.expected)
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func aBodyOver64KiBIsTooLarge() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            let padding = String(repeating: "x", count: 64 * 1024)
            let response = try await fixture.send(
                #"{"message":{"topic":"news","data":{"k":"\#(padding)"}}}"#, accessToken: accessToken)
            #expect(response.status == 413)
            #expect(fixture.simulator.requests.last?.status == 413)
        }
    }

    @Test func aRefusedRequestIsRecordedWithItsTarget() async throws {
        try await withSimulator { fixture in
            let accessToken = try await fixture.accessToken()
            _ = try await fixture.send(#"{"message":{"token":"short"}}"#, accessToken: accessToken)
            let request = try #require(fixture.simulator.requests.last)
            #expect(request.endpoint == .send)
            #expect(request.status == 400)
            #expect(request.errorCode == "INVALID_ARGUMENT")
            #expect(request.target == .token("short"))
        }
    }
}
