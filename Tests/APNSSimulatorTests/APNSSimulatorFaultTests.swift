import APNSCore
import APNSSimulator
import HeraldTestSupport
import NIOCore
import NIOHTTP2
import Synchronization
import Testing

@Suite struct APNSSimulatorFaultTests {
    @Test func injectedFailureAnswersEveryNthRequest() async throws {
        try await withHarness {
            $0.injectedFailures = [.serviceUnavailable(every: 2)]
        } _: {
            (harness: Harness) async throws in
            var statuses: [Int] = []
            var reasons: [String?] = []
            for _ in 0..<4 {
                let response = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
                statuses.append(response.status)
                reasons.append(response.reason)
            }
            #expect(statuses == [200, 503, 200, 503])
            #expect(reasons == [nil, "ServiceUnavailable", nil, "ServiceUnavailable"])
            #expect(harness.simulator.counts == ["200": 2, "503 ServiceUnavailable": 2])
            #expect(harness.simulator.records.count == 2)
        }
    }

    @Test(arguments: [
        InjectedFailure.tooManyRequests(tokenPrefix: "a5", times: 2),
        InjectedFailure.internalServerError(tokenPrefix: "A5", times: 2),
    ])
    func injectedFailureForATokenPrefixFiresAtMostTimes(_ failure: InjectedFailure) async throws {
        let flaky = "a5" + String(repeating: "0", count: 62)
        try await withHarness {
            $0.injectedFailures = [failure]
        } _: { (harness: Harness) async throws in
            var statuses: [Int] = []
            for token in [flaky, Fixtures.token, flaky, flaky, flaky] {
                statuses.append(try await harness.client.send(Fixtures.request(token: token, jwt: harness.jwt)).status)
            }
            #expect(statuses == [failure.status, 200, failure.status, 200, 200])
        }
    }

    @Test func injectedFailureWithTimesPerTokenFailsEachTokenThatManyTimes() async throws {
        let first = "a5" + String(repeating: "0", count: 62)
        let second = "a5" + String(repeating: "1", count: 62)
        try await withHarness {
            $0.injectedFailures = [.serviceUnavailable(tokenPrefix: "a5", timesPerToken: 2)]
        } _: { (harness: Harness) async throws in
            var statuses: [Int] = []
            // However the two devices' requests interleave, each is failed exactly twice, then accepted.
            for token in [first, first, first, second, Fixtures.token, second, first, second] {
                statuses.append(try await harness.client.send(Fixtures.request(token: token, jwt: harness.jwt)).status)
            }
            #expect(statuses == [503, 503, 200, 503, 200, 503, 200, 200])
        }
    }

    @Test func goAwayAfterStreamsSendsGoAwayWithLastStreamAndCloses() async throws {
        try await withHarness {
            $0.goAwayAfterStreams = 2
        } _: { (harness: Harness) async throws in
            let first = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            let second = try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            #expect([first.status, second.status] == [200, 200])
            let frame = await harness.client.rootFrames.first(where: isGoAway)
            guard case .goAway(let lastStreamID, let errorCode, let opaqueData) = frame else {
                Issue.record("no GOAWAY before the connection closed")
                return
            }
            #expect(lastStreamID == HTTP2StreamID(second.streamID))
            #expect(errorCode == .noError)
            #expect(opaqueData.map { String(buffer: $0) } == #"{"reason":"Shutdown"}"#)
            try await harness.client.channel.closeFuture.get()
            #expect(harness.simulator.records.count == 2)
        }
    }

    @Test func goAwayStillAnswersStreamsUpToTheLastStreamID() async throws {
        try await withHarness {
            $0.goAwayAfterStreams = 1
        } _: { (harness: Harness) async throws in
            // Both are on the wire before the server answers the first; the second has the highest id seen.
            let jwt = harness.jwt
            let futures = [
                harness.client.start(Fixtures.request(jwt: jwt)), harness.client.start(Fixtures.request(jwt: jwt)),
            ]
            var answered = 0
            for future in futures {
                if (try? await future.get())?.status == 200 { answered += 1 }
            }
            let frame = await harness.client.rootFrames.first(where: isGoAway)
            guard case .goAway(let lastStreamID, _, _) = frame else {
                Issue.record("no GOAWAY")
                return
            }
            // Every stream at or below lastStreamID was answered; none above it was processed.
            #expect(answered == (lastStreamID == HTTP2StreamID(3) ? 2 : 1))
            #expect(harness.simulator.records.count == answered)
        }
    }

    @Test func dropConnectionAfterStreamsClosesWithoutAnswerOrGoAway() async throws {
        try await withHarness {
            $0.dropConnectionAfterStreams = 1
        } _: { (harness: Harness) async throws in
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.jwt)).status == 200)
            await #expect(throws: (any Error).self) {
                try await harness.client.send(Fixtures.request(jwt: harness.jwt))
            }
            try await harness.client.channel.closeFuture.get()
            #expect(await harness.client.rootFrames.first(where: isGoAway) == nil)
            #expect(harness.simulator.records.count == 1)
            // A new connection is served again.
            let another = try await harness.connectAnotherClient()
            #expect(try await another.send(Fixtures.request(jwt: harness.jwt)).status == 200)
            await another.close()
        }
    }

    @Test func silentTokenIsNeverAnswered() async throws {
        let silent = "5117" + String(repeating: "0", count: 60)
        try await withHarness {
            $0.silentTokenPrefixes = ["5117"]
        } _: { (harness: Harness) async throws in
            let unanswered = harness.client.start(Fixtures.request(token: silent, jwt: harness.jwt))
            let answered = Mutex(false)
            unanswered.whenSuccess { _ in answered.withLock { $0 = true } }
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.jwt)).status == 200)
            #expect(harness.simulator.counts == ["silent": 1, "200": 1])
            #expect(answered.withLock { $0 } == false)
            await harness.client.close()
            await #expect(throws: (any Error).self) { try await unanswered.get() }
        }
    }

    @Test func responseDelayStillAnswers() async throws {
        try await withHarness {
            $0.responseDelay = .milliseconds(20)
        } _: { (harness: Harness) async throws in
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.jwt)).status == 200)
        }
    }

    @Test func streamLimitIsOneUntilTheFirstValidProviderToken() async throws {
        try await withHarness {
            $0.maxConcurrentStreamsUntilAuthenticated = 1
            $0.maxConcurrentStreams = 500
        } _: { (harness: Harness) async throws in
            _ = await harness.client.rootFrames.first(where: isMaxConcurrentStreamsSettings)
            #expect(harness.client.rootFrames.advertisedMaxConcurrentStreams == [1])
            // An invalid token does not lift the limit.
            #expect(try await harness.client.send(Fixtures.request(jwt: "x.y.z")).status == 403)
            #expect(harness.client.rootFrames.advertisedMaxConcurrentStreams == [1])
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.jwt)).status == 200)
            let raised = await harness.client.rootFrames.first { frame in
                guard case .settings(.settings(let settings)) = frame else { return false }
                return settings.contains { $0.parameter == .maxConcurrentStreams && $0.value == 500 }
            }
            #expect(raised != nil)
            #expect(harness.client.rootFrames.advertisedMaxConcurrentStreams == [1, 500])
        }
    }

    @Test func newProviderTokenWithinTwentyMinutesIsTooManyUpdates() async throws {
        try await withHarness { (harness: Harness) async throws in
            let first = harness.jwt
            #expect(try await harness.client.send(Fixtures.request(jwt: first)).status == 200)

            harness.clock.advance(bySeconds: 60)
            let second = harness.freshJWT()
            let rejected = try await harness.client.send(Fixtures.request(jwt: second))
            #expect(rejected.status == 429)
            #expect(rejected.reason == "TooManyProviderTokenUpdates")
            // The connection keeps the token it had.
            #expect(try await harness.client.send(Fixtures.request(jwt: first)).status == 200)
            // Another connection may start with the new token.
            let another = try await harness.connectAnotherClient()
            #expect(try await another.send(Fixtures.request(jwt: second)).status == 200)
            await another.close()

            harness.clock.advance(bySeconds: 20 * 60)
            #expect(try await harness.client.send(Fixtures.request(jwt: second)).status == 200)
        }
    }

    @Test func tokenUpdateRuleCanBeDisabled() async throws {
        try await withHarness {
            $0.minimumTokenUpdateInterval = nil
        } _: { (harness: Harness) async throws in
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.jwt)).status == 200)
            harness.clock.advance(bySeconds: 1)
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.freshJWT())).status == 200)
        }
    }

    @Test func tokenOfAnotherTeamOnTheSameConnectionIsUnrelated() async throws {
        let otherTeam = try ProviderTokenSigner(
            teamID: "TEAM654321",
            keyID: TestCredentials.secondKeyID,
            pemKey: TestCredentials.secondProviderKeyPEM
        )
        try await withHarness {
            $0.providerKeys[TestCredentials.secondKeyID] = .init(
                teamID: "TEAM654321", publicKeyPEM: otherTeam.publicKeyPEM)
        } _: { (harness: Harness) async throws in
            #expect(try await harness.client.send(Fixtures.request(jwt: harness.jwt)).status == 200)
            let otherJWT = try otherTeam.makeToken(issuedAt: harness.clock.now)
            let response = try await harness.client.send(Fixtures.request(jwt: otherJWT))
            #expect(response.status == 403)
            #expect(response.reason == "UnrelatedKeyIdInToken")
            let another = try await harness.connectAnotherClient()
            #expect(try await another.send(Fixtures.request(jwt: otherJWT)).status == 200)
            await another.close()
        }
    }
}
