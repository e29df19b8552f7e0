import APNSCore
import APNSSimulator
import HeraldTestSupport
import PushTransport
import Testing

/// The client's own HPACK encoding against a server that decodes with its own table (the simulator, NIOHTTP2).
@Suite struct APNSClientHeaderTests {
    /// A server that advertises a table smaller than the default decodes with that table once it has our SETTINGS
    /// acknowledgement: a client that kept indexing into 4,096 bytes would refer to entries the server never kept,
    /// and the connection would fail with a compression error.
    @Test(arguments: [0, 256])
    func aServersSmallHeaderTableIsKeptAcrossProviderTokens(size: Int) async throws {
        try await SimulatorFixture.with { simulator in
            simulator.headerTableSize = size
        } _: { fixture in
            let firstProviderToken = try fixture.cache.current().value
            let tokens = (0..<200).map(hexToken)
            for (index, token) in tokens.enumerated() {
                // Halfway, the provider token is due for refresh: a new `authorization` value on the same connection.
                if index == 100 { fixture.clock.advance(bySeconds: 51 * 60) }
                let outcome = try await fixture.client.send(makeRequest(token: token))
                #expect(outcome.status == 200, "request \(index)")
            }
            let batch = await fixture.client.sendAll(count: 300, concurrency: 100) { index in
                makeRequest(token: hexToken(1_000 + index))
            } onAnswer: { _, _ in
            }
            #expect(batch.allSatisfy { (try? $0?.get())?.status == 200 })
            #expect(fixture.simulator.records.count == 500)
            #expect(Set(fixture.simulator.records.map(\.token)).isSuperset(of: tokens))
            #expect(try fixture.cache.current().value != firstProviderToken)
            #expect(fixture.logs.count(of: "APNs connection established") == 1)
        }
    }

    /// Any field can be the one too long: the topic, or a push type (an open set, kept as text when unknown).
    @Test(arguments: ["topic", "push type"])
    func headersTooLargeForOneFrameFailOnlyTheirRequest(field: String) async throws {
        try await SimulatorFixture.with { fixture in
            var oversized = makeRequest(token: "a1b2c3d4")
            if field == "topic" {
                oversized.topic = String(repeating: "t", count: 4_000)
            } else {
                oversized.pushType = PushType(rawValue: String(repeating: "p", count: 4_000))
            }
            do throws(TransportError) {
                _ = try await fixture.client.send(oversized)
                Issue.record("a request with 4,000 bytes of \(field) was sent")
            } catch {
                #expect(error.code == .protocolError)
                #expect(error.message.contains("over the 3840"))
            }
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d5"))
            #expect(outcome.status == 200)
            #expect(fixture.simulator.records.map(\.token) == ["a1b2c3d5"])
            #expect(fixture.logs.count(of: "APNs connection established") == 1)
        }
    }
}
