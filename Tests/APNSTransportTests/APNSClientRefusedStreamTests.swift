import APNSCore
import HeraldTestSupport
import PushTransport
import Testing

/// RST_STREAM(REFUSED_STREAM) means the server did not process the request: the client sends it again, a bounded
/// number of times.
@Suite struct APNSClientRefusedStreamTests {
    @Test func refusedStreamIsRetriedAndThenAnswered() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.refusedStreamTokenPrefixes = ["dead"]
            simulator.refusedStreamLimit = 1
        } _: { fixture in
            let outcome = try await fixture.client.send(makeRequest(token: "deadbeef"))
            #expect(outcome.status == 200)
            #expect(fixture.simulator.records.count == 1)
            #expect(fixture.simulator.counts["refused"] == 1)
            #expect(fixture.logs.count(of: "APNs request not processed; retrying") == 1)
        }
    }

    @Test func streamRefusedEveryTimeFailsAfterTheLastAttemptWithoutAnAnswer() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.refusedStreamTokenPrefixes = ["dead"]
        } _: { fixture in
            await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest(token: "deadbeef"))
            }
            #expect(fixture.simulator.records.isEmpty)
            #expect((fixture.simulator.counts["refused"] ?? 0) >= 2)
        }
    }
}
