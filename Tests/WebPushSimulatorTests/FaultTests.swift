import Foundation
import Testing
import WebPushSimulator

@Suite struct FaultTests {
    @Test func tooManyRequestsCarriesRetryAfterAndTheRecordShowsTheWait() async throws {
        try await withSimulator {
            $0.injectedFailures = [.tooManyRequests(times: 1, retryAfter: 120)]
        } _: { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let refused = try await fixture.push("x", to: subscription)
            #expect(refused.status == 429)
            #expect(refused.headers.first(name: "retry-after") == "120")
            #expect(refused.reason == "TooManyRequests")
            fixture.clock.advance(bySeconds: 120)
            #expect(try await fixture.push("x", to: subscription).status == 201)

            let requests = fixture.simulator.requests
            #expect(requests.map(\.status) == [429, 201])
            #expect(requests[0].retryAfter == 120)
            #expect(requests[1].receivedAt - requests[0].receivedAt >= 120)
            #expect(fixture.simulator.records.map(\.text) == ["x"])
        }
    }

    @Test func serviceUnavailableEverySecondRequestWithRetryAfter() async throws {
        try await withSimulator {
            $0.injectedFailures = [.serviceUnavailable(every: 2, retryAfter: 5)]
        } _: { fixture in
            let subscription = fixture.simulator.makeSubscription()
            var statuses: [Int] = []
            var retryAfters: [String?] = []
            for index in 0..<4 {
                let response = try await fixture.push("m\(index)", to: subscription)
                statuses.append(response.status)
                retryAfters.append(response.headers.first(name: "retry-after"))
            }
            #expect(statuses == [201, 503, 201, 503])
            #expect(retryAfters == [nil, "5", nil, "5"])
            #expect(fixture.simulator.records.map(\.text) == ["m0", "m2"])
            #expect(fixture.simulator.counts["503 ServiceUnavailable"] == 2)
        }
    }

    @Test(arguments: [404, 410, 413, 500, 502])
    func anInjectedStatusForAnIDPrefixSparesOtherSubscriptions(_ status: Int) async throws {
        try await withSimulator {
            $0.injectedFailures = [WebPushInjectedFailure(status: status, times: 2, idPrefix: "flaky-")]
        } _: { fixture in
            let flaky = fixture.simulator.makeSubscription(id: "flaky-1")
            let steady = fixture.simulator.makeSubscription(id: "steady-1")
            var statuses: [Int] = []
            for subscription in [flaky, steady, flaky, flaky] {
                statuses.append(try await fixture.push("x", to: subscription).status)
            }
            #expect(statuses == [status, 201, status, 201])
            #expect(fixture.simulator.records.map(\.subscriptionID) == ["steady-1", "flaky-1"])
        }
    }

    @Test func theConnectionIsDroppedAfterNRequests() async throws {
        try await withSimulator {
            $0.dropConnectionAfterRequests = 1
        } _: { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let first = try await fixture.push("first", to: subscription)
            #expect(first.status == 201)
            await #expect(throws: (any Error).self) {
                _ = try await fixture.push("second", to: subscription)
            }
            await fixture.simulator.waitForRequests(count: 2)
            #expect(fixture.simulator.requests.map(\.status).prefix(2) == [201, 0])
            #expect(fixture.simulator.records.map(\.text) == ["first"])
        }
    }

    @Test func aDelayedAnswerStillArrivesWhole() async throws {
        try await withSimulator {
            $0.responseDelay = .milliseconds(1)
        } _: { fixture in
            let subscription = fixture.simulator.makeSubscription()
            let response = try await fixture.push("late", to: subscription)
            #expect(response.status == 201)
            #expect(response.headers.first(name: "ttl") == "60")
        }
    }

    @Test func theSummaryCountsAnswersAndUndecryptableMessages() async throws {
        try await withSimulator { fixture in
            let subscription = fixture.simulator.makeSubscription()
            _ = try await fixture.push("ok", to: subscription)
            _ = try await fixture.push("no ttl", to: subscription, replacing: ["ttl": nil])
            let body = try TestPushSender.encrypt(
                Array("wrong".utf8), p256dh: subscription.p256dh,
                auth: TestPushSender.base64URL([UInt8](repeating: 1, count: 16)))
            _ = try await fixture.post(body, to: subscription.endpoint, headers: try fixture.headers())
            #expect(
                fixture.simulator.summary() == """
                    Web Push simulator: 3 requests
                      201: 2
                      400 MissingTTL: 1
                      undecryptable (answered 201): 1
                    """)
        }
    }
}
