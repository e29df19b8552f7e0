import APNSCore
import APNSSimulator
import HeraldTestSupport
import PushTransport
import Testing

/// Connections that APNs or the network make unusable are replaced without failing other requests.
@Suite struct APNSClientReplacementTests {
    @Test func unrelatedKeyIdInTokenMovesTheRequestToANewConnection() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.injectedFailures = [InjectedFailure(status: 403, reason: "UnrelatedKeyIdInToken", times: 1)]
        } _: { fixture in
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(outcome.status == 200)
            #expect(fixture.simulator.counts["403 UnrelatedKeyIdInToken"] == 1)
            #expect(fixture.simulator.counts["200"] == 1)
            #expect(fixture.logs.count(of: "APNs connection established") == 2)
        }
    }

    @Test func aConnectionWithRepeatedTimeoutsIsReplaced() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.silentTokenPrefixes = ["ffff"]
        } client: { client in
            client.requestTimeout = .milliseconds(500)
        } _: { fixture in
            for index in 0..<3 {
                let error = await #expect(throws: TransportError.self) {
                    try await fixture.client.send(makeRequest(token: "ffff000\(index)"))
                }
                #expect(error?.code == .timeout)
            }
            #expect(fixture.logs.count(of: "APNs connection replaced after repeated timeouts") == 1)
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(outcome.status == 200)
            #expect(fixture.logs.count(of: "APNs connection established") == 2)
        }
    }
}
