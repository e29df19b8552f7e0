import APNSCore
import HeraldCore
import HeraldTestSupport
import PushTransport
import Synchronization
import Testing

@testable import HeraldWorker

/// The sending stage against a fake APNs client: the probe rule, in-process retries of transient answers and of
/// lost connections, and a job stopped by its first answer. No network, no services.
@Suite struct SenderTests {
    /// Answers each request with `answer(token, how many times this token was sent before)`; records what was sent.
    final class FakeTransport: NotificationTransport {
        let answer: @Sendable (String, Int) -> Result<APNSOutcome, TransportError>
        private let sent = Mutex<[String]>([])

        init(answer: @escaping @Sendable (String, Int) -> Result<APNSOutcome, TransportError>) {
            self.answer = answer
        }

        var requests: [String] { sent.withLock { $0 } }

        private func respond(_ request: APNSRequest) -> Result<APNSOutcome, TransportError> {
            let token = request.deviceToken.hex
            let before = sent.withLock { sent in
                defer { sent.append(token) }
                return sent.filter { $0 == token }.count
            }
            return answer(token, before)
        }

        /// An APNs answer or transport error in the neutral terms, as `APNSClient`'s conformance gives them.
        private func neutral(_ result: Result<APNSOutcome, TransportError>) -> Result<
            ProviderAnswer, TransportFailure
        > {
            result.map(ProviderAnswer.init).mapError { TransportFailure(code: $0.code.description) }
        }

        func transportAll(
            count: Int,
            concurrency: Int,
            request: @escaping @Sendable (Int) -> APNSRequest?,
            onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
        ) async -> [Result<ProviderAnswer, TransportFailure>?] {
            (0..<count).map { index in
                guard let made = request(index) else { return nil }
                let result = neutral(respond(made))
                onAnswer(index, result)
                return result
            }
        }

        func transport(_ request: APNSRequest) async throws(TransportFailure) -> ProviderAnswer {
            try neutral(respond(request)).get()
        }

        var settlement: any SettlementTable { APNSSettlementTable() }
    }

    static func outcome(_ status: Int, _ reason: String? = nil) -> Result<APNSOutcome, TransportError> {
        .success(
            APNSOutcome(
                status: status, apnsID: nil, apnsUniqueID: nil,
                body: reason.map { Array(#"{"reason":"\#($0)"}"#.utf8) } ?? []))
    }

    static let tokens = (0..<5).map { DeviceToken(trustedHex: String(format: "%064x", $0)) }

    static func share(registry: StoppedJobs = StoppedJobs()) throws -> Sender.Share<RequestList> {
        let job = try PreparedJob.decode(
            Array(#"{"id":"j","app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"}}}"#.utf8)
        ) { "j" }
        let requests = RequestList(job: job, bundleID: "com.a", tokens: tokens, payloads: nil)
        return Sender.Share(
            requests: requests, range: 0..<requests.count, stop: StopFlag(job: job.key, registry: registry),
            publishedAt: 0)
    }

    /// Retries after a millisecond at most: the backoff's shape is `RetryPolicy`'s, tested in HeraldCore.
    static let sender = Sender(
        concurrency: 8,
        policy: RetryPolicy(
            baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1), transportDelay: .milliseconds(1)),
        metrics: WorkerMetrics(), clock: MockClock(randomValue: 0.5).skipping)

    @Test func aJobRejectedByItsFirstAnswerSendsNothingMore() async throws {
        let registry = StoppedJobs()
        let transport = FakeTransport { _, _ in Self.outcome(400, "BadTopic") }
        let results = await Self.sender.sendProbingFirst([try Self.share(registry: registry)], through: transport)[0]
        #expect(transport.requests.count == 1)
        #expect(
            results.map(\.disposition) == [.failJob(reason: .badTopic)]
                + Array(repeating: .failJob(reason: StopFlag.stopped), count: 4))
        // The worker's other batches of the job learn it too.
        #expect(registry.contains(JobKey(app: "a", id: "j")))
    }

    @Test func transientAnswersAreRetriedInProcessUntilTheyPass() async throws {
        // Each device answers 503 twice, then 200.
        let transport = FakeTransport { _, before in
            before < 2 ? Self.outcome(503, "ServiceUnavailable") : Self.outcome(200)
        }
        let results = await Self.sender.sendProbingFirst([try Self.share()], through: transport)[0]
        #expect(results.map(\.disposition) == Array(repeating: .delivered, count: 5))
        #expect(results.map(\.retries) == Array(repeating: 2, count: 5))
        #expect(transport.requests.count == 15)
        #expect(results.map(\.token) == Self.tokens)
    }

    @Test func aLostConnectionIsRetriedPromptlyThenLeftToTheRetryQueues() async throws {
        let lost = TransportError(.connectionClosed, "connection lost")
        // The third device's connection is always lost; the others are lost once.
        let transport = FakeTransport { token, before in
            token == Self.tokens[2].hex || before == 0 ? .failure(lost) : Self.outcome(200)
        }
        let results = await Self.sender.sendProbingFirst([try Self.share()], through: transport)[0]
        #expect(results[2].disposition == .exhausted(reason: lost.code.description))
        #expect(results[2].retries == Self.sender.policy.transportAttempts - 1)
        for index in [0, 1, 3, 4] {
            #expect(results[index].disposition == .delivered && results[index].retries == 1)
        }
    }

    @Test func deadTokensArePrunedWithoutARetry() async throws {
        let transport = FakeTransport { token, _ in
            token == Self.tokens[1].hex ? Self.outcome(410, "Unregistered") : Self.outcome(200)
        }
        let results = await Self.sender.sendProbingFirst([try Self.share()], through: transport)[0]
        #expect(transport.requests.count == 5)
        #expect(results[1].disposition == .prune(reason: .unregistered, timestamp: nil))
    }
}
