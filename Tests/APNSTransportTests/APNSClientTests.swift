import APNSCore
import APNSSimulator
import HeraldTestSupport
import PushTransport
import Testing

/// The client against the simulator on loopback: answers, rejections, stream limits, failures and shutdown.
@Suite struct APNSClientTests {
    @Test func successRoundTripSendsHeadersAndEchoesAPNSID() async throws {
        try await SimulatorFixture.with { fixture in
            let id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d4", apnsID: APNSID(id)))
            #expect(outcome.status == 200)
            #expect(outcome.apnsID == id)
            #expect(outcome.reason == nil)
            let records = fixture.simulator.records
            #expect(records.count == 1)
            #expect(records.first?.token == "a1b2c3d4")
            #expect(records.first?.topic == "com.example.app")
            #expect(records.first?.pushType == "alert")
            #expect(records.first?.priority == 10)
            #expect(records.first?.expiration == 0)
            #expect(records.first?.apnsID == id)
            #expect(records.first?.payload == #"{"aps":{"alert":"hello"}}"#)
        }
    }

    @Test func unregisteredTokenAnswers410WithTheTimestamp() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.deadTokens = ["deadbeef"]
            simulator.deadTimestamp = 1_700_000_000_000
        } _: { fixture in
            let outcome = try await fixture.client.send(makeRequest(token: "deadbeef"))
            #expect(outcome.status == 410)
            #expect(outcome.reason == .unregistered)
            #expect(outcome.timestamp == 1_700_000_000_000)
            #expect(outcome.apnsID != nil)
        }
    }

    @Test func manyConcurrentRequestsOnOneConnectionAreAllAnswered() async throws {
        try await SimulatorFixture.with { fixture in
            let count = 2_000
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<count {
                    group.addTask { try await fixture.client.send(makeRequest(token: hexToken(index))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == count)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(fixture.simulator.records.count == count)
            #expect(fixture.logs.count(of: "APNs connection established") == 1)
        }
    }

    @Test func streamLimitFromSettingsIsRespected() async throws {
        // Starts at one stream until the first authenticated request, then three; the server refuses any excess,
        // which the client would log as a retry.
        try await SimulatorFixture.with { simulator in
            simulator.maxConcurrentStreamsUntilAuthenticated = 1
            simulator.maxConcurrentStreams = 3
            simulator.responseDelay = .milliseconds(5)
        } _: { fixture in
            let count = 60
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<count {
                    group.addTask { try await fixture.client.send(makeRequest(token: hexToken(index))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(fixture.simulator.records.count == count)
            #expect(fixture.logs.count(of: "APNs request not processed; retrying") == 0)
            #expect(fixture.logs.count(of: "APNs request not sent; moving it to another connection") == 0)
            #expect(fixture.simulator.counts.keys.sorted() == ["200"])
        }
    }

    @Test func requestWithoutAnswerTimesOutAndTheConnectionStaysUsable() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.silentTokenPrefixes = ["ffff"]
        } client: { client in
            client.requestTimeout = .seconds(1)
        } _: { fixture in
            let error = await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest(token: "ffff0001"))
            }
            #expect(error?.code == .timeout)
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(outcome.status == 200)
            #expect(fixture.logs.count(of: "APNs connection established") == 1)
        }
    }

    @Test func droppedConnectionFailsInFlightRequestsAndIsReplaced() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.dropConnectionAfterStreams = 1
        } _: { fixture in
            let first = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(first.status == 200)
            let error = await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest(token: "a1b2c3d5"))
            }
            #expect(error?.code == .connectionClosed)
            let third = try await fixture.client.send(makeRequest(token: "a1b2c3d6"))
            #expect(third.status == 200)
            #expect(fixture.logs.count(of: "APNs connection established") == 2)
        }
    }

    @Test func goAwayFinishesProcessedStreamsAndRetriesTheRestOnANewConnection() async throws {
        // Eight streams at a time: when GOAWAY comes most requests still wait for a stream and must move to a new
        // connection; those the server saw are answered on the old one, and none is sent twice.
        try await SimulatorFixture.with { simulator in
            simulator.goAwayAfterStreams = 40
            simulator.maxConcurrentStreams = 8
        } _: { fixture in
            let count = 100
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<count {
                    group.addTask { try await fixture.client.send(makeRequest(token: hexToken(index))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == count)
            #expect(statuses.allSatisfy { $0 == 200 })
            let tokens = fixture.simulator.records.map(\.token)
            #expect(tokens.count == count)
            #expect(Set(tokens).count == count)
            #expect(fixture.logs.count(of: "APNs connection received GOAWAY") >= 1)
            #expect(fixture.logs.count(of: "APNs connection established") >= 2)
        }
    }

    @Test func expiredProviderTokenIsRefreshedAndTheRequestSentOnceMore() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.injectedFailures = [
                InjectedFailure(status: 403, reason: "ExpiredProviderToken", every: 2, times: 1)
            ]
        } _: { fixture in
            let firstIssuedAt = fixture.clock.now
            let first = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(first.status == 200)
            fixture.clock.advance(bySeconds: 21 * 60)
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d5"))
            #expect(outcome.status == 200)
            #expect(try fixture.cache.current().issuedAt == firstIssuedAt + 21 * 60)
            #expect(fixture.simulator.records.count == 2)
        }
    }

    @Test func expiredProviderTokenTwiceIsReturnedAsTheOutcome() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.injectedFailures = [
                InjectedFailure(status: 403, reason: "ExpiredProviderToken", every: 1, times: 2)
            ]
        } _: { fixture in
            let outcome = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(outcome.status == 403)
            #expect(outcome.reason == .expiredProviderToken)
            #expect(fixture.simulator.counts["403 ExpiredProviderToken"] == 2)
        }
    }

    @Test func requestsSpreadOverThePoolsConnections() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.responseDelay = .milliseconds(20)
        } client: { client in
            client.connections = 3
        } _: { fixture in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<30 {
                    group.addTask { try await fixture.client.send(makeRequest(token: hexToken(index))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(fixture.logs.count(of: "APNs connection established") == 3)
        }
    }

    @Test func boundedQueueMakesCallersWaitInsteadOfGrowing() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.responseDelay = .milliseconds(2)
        } client: { client in
            client.maximumQueuedRequests = 4
        } _: { fixture in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<100 {
                    group.addTask { try await fixture.client.send(makeRequest(token: hexToken(index))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == 200 })
        }
    }

    @Test func shutdownFailsLaterRequestsAndClosesTheConnection() async throws {
        try await SimulatorFixture.with { fixture in
            let first = try await fixture.client.send(makeRequest())
            #expect(first.status == 200)
            await fixture.client.shutdown()
            let error = await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest())
            }
            #expect(error?.code == .shutDown)
            #expect(fixture.logs.count(of: "APNs connection closed") == 1)
        }
    }

    @Test func shutdownLetsInFlightRequestsFinish() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.responseDelay = .milliseconds(200)
        } _: { fixture in
            async let answered = fixture.client.send(makeRequest())
            await fixture.simulator.waitForRecords(count: 1)
            await fixture.client.shutdown()
            let outcome = try await answered
            #expect(outcome.status == 200)
        }
    }
}

/// A distinct even-length hex token per index.
func hexToken(_ index: Int) -> String {
    let hex = String(index, radix: 16)
    return "a0" + String(repeating: "0", count: 8 - hex.count) + hex
}
