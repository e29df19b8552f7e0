import APNSCore
import APNSSimulator
import HeraldTestSupport
import PushTransport
import Synchronization
import Testing

/// `sendAll`: many requests as one batch, answered on the event loop, with the same transport rules as `send`.
@Suite struct APNSClientBatchTests {
    @Test func everyRequestGetsItsOwnAnswerInOrderAndIsReportedOnce() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.deadTokenPrefixes = ["dead"]
        } _: { fixture in
            let count = 1_500
            let tokens = (0..<count).map { $0 % 7 == 3 ? "dead" + hexToken($0) : hexToken($0) }
            let reported = Mutex([Int](repeating: 0, count: count))
            let results = await fixture.client.sendAll(count: count, concurrency: 200) { index in
                makeRequest(token: tokens[index])
            } onAnswer: { index, _ in
                reported.withLock { $0[index] += 1 }
            }
            for (index, result) in results.enumerated() {
                let status = try #require(try result?.get()).status
                #expect(status == (index % 7 == 3 ? 410 : 200), "request \(index)")
            }
            #expect(reported.withLock { $0 }.allSatisfy { $0 == 1 })
            let sent = fixture.simulator.records.map(\.token)
            #expect(Set(sent) == Set(tokens.filter { !$0.hasPrefix("dead") }))
            #expect(sent.count == count - tokens.filter { $0.hasPrefix("dead") }.count)
            #expect(fixture.logs.count(of: "APNs connection established") == 1)
        }
    }

    @Test func aRequestTheCallerDeclinesIsNotSentAndHasNoResult() async throws {
        try await SimulatorFixture.with { fixture in
            let results = await fixture.client.sendAll(count: 40, concurrency: 8) { index in
                index.isMultiple(of: 2) ? makeRequest(token: hexToken(index)) : nil
            } onAnswer: { index, _ in
                #expect(index.isMultiple(of: 2))
            }
            for (index, result) in results.enumerated() {
                if index.isMultiple(of: 2) {
                    #expect((try? result?.get())?.status == 200)
                } else {
                    #expect(result == nil)
                }
            }
            #expect(Set(fixture.simulator.records.map(\.token)) == Set((0..<20).map { hexToken($0 * 2) }))
        }
    }

    @Test func noMoreThanTheWindowIsInFlight() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.responseDelay = .milliseconds(5)
        } _: { fixture in
            let flight = InFlightGauge()
            let results = await fixture.client.sendAll(count: 60, concurrency: 3) { index in
                flight.made()
                return makeRequest(token: hexToken(index))
            } onAnswer: { _, _ in
                flight.answered()
            }
            #expect(allAnswered200(results))
            #expect(flight.most == 3)
        }
    }

    @Test func aFullClientMakesTheBatchWaitForRoomInsteadOfGrowing() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.responseDelay = .milliseconds(2)
        } client: { client in
            client.maximumQueuedRequests = 4
        } _: { fixture in
            // Other callers hold room too, so the batch finds the client full both with and without its own in flight.
            async let others = withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask { try await fixture.client.send(makeRequest(token: "b0" + hexToken(index))).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            // A request is made once it has room: what the gauge sees in flight is the room the batch holds.
            let held = InFlightGauge()
            let results = await fixture.client.sendAll(count: 100, concurrency: 50) { index in
                held.made()
                return makeRequest(token: hexToken(index))
            } onAnswer: { _, _ in
                held.answered()
            }
            #expect(allAnswered200(results))
            #expect(held.most <= 4)
            let otherStatuses = try await others
            #expect(otherStatuses.allSatisfy { $0 == 200 })
            #expect(fixture.simulator.records.count == 140)
        }
    }

    @Test func aConnectionLostMidBatchFailsOnlyWhatWasInFlightAndTheRestGoesToANewOne() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.dropConnectionAfterStreams = 30
            simulator.responseDelay = .milliseconds(1)
        } _: { fixture in
            let count = 60
            let reported = Mutex([Int](repeating: 0, count: count))
            let results = await fixture.client.sendAll(count: count, concurrency: 10) { index in
                makeRequest(token: hexToken(index))
            } onAnswer: { index, _ in
                reported.withLock { $0[index] += 1 }
            }
            var answered = 0
            var lost = 0
            for result in results {
                switch result {
                case .success(let outcome)?:
                    #expect(outcome.status == 200)
                    answered += 1
                case .failure(let error)?:
                    #expect(error.code == .connectionClosed)
                    lost += 1
                case nil:
                    Issue.record("a request has no result")
                }
            }
            #expect(lost >= 1 && lost <= 10)
            #expect(answered == count - lost)
            #expect(reported.withLock { $0 }.allSatisfy { $0 == 1 })
            // A lost request may or may not have reached the server; none is sent twice.
            let seen = fixture.simulator.records.map(\.token)
            #expect(seen.count >= answered && seen.count <= count)
            #expect(Set(seen).count == seen.count)
            #expect(fixture.logs.count(of: "APNs connection established") == 2)
        }
    }

    @Test func goAwayMidBatchMovesWhatWasNotProcessedAndSendsNoneTwice() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.goAwayAfterStreams = 40
            simulator.maxConcurrentStreams = 8
        } _: { fixture in
            let count = 100
            let results = await fixture.client.sendAll(count: count, concurrency: count) { index in
                makeRequest(token: hexToken(index))
            } onAnswer: { _, _ in
            }
            #expect(allAnswered200(results))
            let tokens = fixture.simulator.records.map(\.token)
            #expect(tokens.count == count)
            #expect(Set(tokens).count == count)
            #expect(fixture.logs.count(of: "APNs connection received GOAWAY") >= 1)
        }
    }

    @Test func refusedStreamsAreSentAgainAfterTheBatch() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.refusedStreamTokenPrefixes = ["dead"]
            simulator.refusedStreamLimit = 3
        } _: { fixture in
            let tokens = (0..<20).map { $0 < 3 ? "dead" + hexToken($0) : hexToken($0) }
            let results = await fixture.client.sendAll(count: tokens.count, concurrency: 20) { index in
                makeRequest(token: tokens[index])
            } onAnswer: { _, _ in
            }
            #expect(allAnswered200(results))
            #expect(fixture.simulator.counts["refused"] == 3)
            #expect(fixture.simulator.records.count == 20)
        }
    }

    @Test func anExpiredProviderTokenIsRefreshedAndItsRequestSentOnceMore() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.injectedFailures = [
                InjectedFailure(status: 403, reason: "ExpiredProviderToken", every: 2, times: 1)
            ]
        } _: { fixture in
            let firstIssuedAt = fixture.clock.now
            let first = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
            #expect(first.status == 200)
            fixture.clock.advance(bySeconds: 21 * 60)
            let results = await fixture.client.sendAll(count: 10, concurrency: 1) { index in
                makeRequest(token: hexToken(index))
            } onAnswer: { _, _ in
            }
            #expect(allAnswered200(results))
            #expect(fixture.simulator.counts["403 ExpiredProviderToken"] == 1)
            #expect(try fixture.cache.current().issuedAt == firstIssuedAt + 21 * 60)
            #expect(fixture.simulator.records.count == 11)
        }
    }

    @Test func aShutDownClientFailsEveryRequestOfTheBatchThatIsNotSkipped() async throws {
        try await SimulatorFixture.with { fixture in
            await fixture.client.shutdown()
            let reported = Mutex(0)
            let results = await fixture.client.sendAll(count: 6, concurrency: 2) { index in
                index.isMultiple(of: 2) ? makeRequest(token: hexToken(index)) : nil
            } onAnswer: { _, _ in
                reported.withLock { $0 += 1 }
            }
            for (index, result) in results.enumerated() {
                if index.isMultiple(of: 2) {
                    if case .failure(let error)? = result {
                        #expect(error.code == .shutDown)
                    } else {
                        Issue.record("\(index): \(result as Any)")
                    }
                } else {
                    #expect(result == nil)
                }
            }
            #expect(reported.withLock { $0 } == 3)
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func cancellingTheBatchFailsWhatWasNotSentAndLetsTheInFlightFinish() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.silentTokenPrefixes = ["ffff"]
        } client: { client in
            client.requestTimeout = .seconds(1)
        } _: { fixture in
            let sent = AsyncStream.makeStream(of: Void.self)
            let batch = Task {
                await fixture.client.sendAll(count: 10, concurrency: 1) { index in
                    sent.continuation.yield()
                    return makeRequest(token: "ffff" + hexToken(index))
                } onAnswer: { _, _ in
                }
            }
            for await _ in sent.stream { break }
            batch.cancel()
            let results = await batch.value
            if case .failure(let error)? = results[0] {
                #expect(error.code == .timeout)
            } else {
                Issue.record("\(results[0] as Any)")
            }
            for result in results.dropFirst() {
                if case .failure(let error)? = result {
                    #expect(error.code == .cancelled)
                } else {
                    Issue.record("\(result as Any)")
                }
            }
        }
    }
}

/// Every request of a batch was sent and answered 200.
private func allAnswered200(_ results: [Result<APNSOutcome, TransportError>?]) -> Bool {
    results.allSatisfy { (try? $0?.get().status) == 200 }
}

/// Counts requests made (just before each is sent) and answered: the difference is what a batch has in flight.
private final class InFlightGauge: Sendable {
    private let counts = Mutex((now: 0, most: 0))

    func made() {
        counts.withLock { counts in
            counts.now += 1
            counts.most = max(counts.most, counts.now)
        }
    }

    func answered() { counts.withLock { $0.now -= 1 } }

    /// The most in flight at once.
    var most: Int { counts.withLock { $0.most } }
}
