import FCMSimulator
import Foundation
import Testing

@Suite struct FaultTests {
    static let message = #"{"message":{"token":"\#(SimulatorFixture.registrationToken)"}}"#

    @Test func aQuotaFailureCarriesRetryAfterAndTheRecordShowsTheWait() async throws {
        try await withSimulator {
            $0.injectedFailures = [.quotaExceeded(times: 1, retryAfter: 60)]
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            let refused = try await fixture.send(Self.message, accessToken: accessToken)
            #expect(refused.status == 429)
            #expect(refused.headers.first(name: "retry-after") == "60")
            #expect(
                refused.body
                    == #"{"error":{"code":429,"message":"Quota exceeded for quota metric 'Send requests' and limit "#
                    + #"'Send requests per minute' of service 'fcm.googleapis.com'.","status":"RESOURCE_EXHAUSTED","#
                    + #""details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","#
                    + #""errorCode":"QUOTA_EXCEEDED"}]}}"#)
            fixture.clock.advance(bySeconds: 60)
            let accepted = try await fixture.send(Self.message, accessToken: accessToken)
            #expect(accepted.status == 200)

            let sends = fixture.simulator.requests.filter { $0.endpoint == .send }
            #expect(sends.map(\.status) == [429, 200])
            #expect(sends[0].retryAfter == 60)
            #expect(sends[1].receivedAt - sends[0].receivedAt >= 60)
            #expect(fixture.simulator.counts["429 QUOTA_EXCEEDED"] == 1)
        }
    }

    @Test func unavailableEverySecondRequestWithRetryAfter() async throws {
        try await withSimulator {
            $0.injectedFailures = [.unavailable(every: 2, retryAfter: 5)]
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            var statuses: [Int] = []
            var retryAfters: [String?] = []
            for _ in 0..<4 {
                let response = try await fixture.send(Self.message, accessToken: accessToken)
                statuses.append(response.status)
                retryAfters.append(response.headers.first(name: "retry-after"))
                if response.status == 503 {
                    #expect(
                        response.json["error"].flatMap { ($0 as? [String: Any])?["status"] as? String } == "UNAVAILABLE"
                    )
                }
            }
            #expect(statuses == [200, 503, 200, 503])
            #expect(retryAfters == [nil, "5", nil, "5"])
            #expect(fixture.simulator.records.count == 2)
        }
    }

    @Test func aFailureForATokenPrefixSparesOtherTokens() async throws {
        let flaky = "flaky-" + SimulatorFixture.registrationToken
        try await withSimulator {
            $0.injectedFailures = [.internalError(times: 2, tokenPrefix: "flaky-")]
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            var statuses: [Int] = []
            for token in [flaky, SimulatorFixture.registrationToken, flaky, flaky] {
                statuses.append(
                    try await fixture.send(#"{"message":{"token":"\#(token)"}}"#, accessToken: accessToken).status)
            }
            #expect(statuses == [500, 200, 500, 200])
            #expect(fixture.simulator.requests.filter { $0.status == 500 }.allSatisfy { $0.errorCode == "INTERNAL" })
        }
    }

    @Test func noRefusedRequestIsSeenTwiceWhenTheClientBehaves() async throws {
        try await withSimulator {
            $0.deadTokenPrefixes = ["dead"]
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            for token in ["dead-0123456789abcdefghij", SimulatorFixture.registrationToken, "bad"] {
                _ = try await fixture.send(#"{"message":{"token":"\#(token)"}}"#, accessToken: accessToken)
            }
            await fixture.simulator.waitForRequests(count: 4)
            let refused = fixture.simulator.requests.filter { [400, 403, 404].contains($0.status) }
            #expect(refused.count == 2)
            #expect(Set(refused.compactMap(\.target)).count == refused.count)
        }
    }

    @Test func theConnectionIsDroppedAfterNRequests() async throws {
        try await withSimulator {
            $0.dropConnectionAfterRequests = 2
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            let first = try await fixture.send(Self.message, accessToken: accessToken)
            #expect(first.status == 200)
            await #expect(throws: (any Error).self) {
                _ = try await fixture.send(Self.message, accessToken: accessToken)
            }
            #expect(fixture.simulator.requests.map(\.status).prefix(3) == [200, 200, 0])
            #expect(fixture.simulator.records.count == 1)
        }
    }

    @Test func theRecordFileHoldsOneLinePerAcceptedMessageWithoutTheAccessToken() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withSimulator {
            $0.recordFile = path
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            _ = try await fixture.send(Self.message, accessToken: accessToken)
            _ = try await fixture.send(#"{"message":{"topic":"news"}}"#, accessToken: accessToken)
            _ = try await fixture.send(#"{"message":{"token":"bad"}}"#, accessToken: accessToken)
            await fixture.simulator.waitForRecords(count: 2)
            let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.allSatisfy { !$0.contains(accessToken) })
            let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(first?["target"] as? String == SimulatorFixture.registrationToken)
            #expect(first?["targetField"] as? String == "token")
            #expect(first?["project"] as? String == "demo-project")
        }
    }

    @Test func aDelayedAnswerStillArrivesWhole() async throws {
        try await withSimulator {
            $0.responseDelay = .milliseconds(1)
        } _: { fixture in
            let accessToken = try await fixture.accessToken()
            let response = try await fixture.send(Self.message, accessToken: accessToken)
            #expect(response.status == 200)
            #expect(response.body == #"{"name":"projects/demo-project/messages/0:1"}"#)
        }
    }
}
