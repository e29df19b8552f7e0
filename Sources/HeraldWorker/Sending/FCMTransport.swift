import APNSCore
import FCMCore
import HeraldCore
import PushTransport
import Synchronization

/// FCM's client as a `NotificationTransport`: its answers read with FCMCore (the FcmError code, whether it names the
/// token, `Retry-After` against the worker's clock) in the provider-neutral terms, its table FCM's. A request is a
/// `messages:send` body.
///
/// A `QUOTA_EXCEEDED` answer pauses the project: until its `Retry-After` has passed, this client sends nothing more
/// and answers each request it holds back as the quota would (429, `QuotaPause`, the time left), so that those
/// devices go to the delay queues with the rest (FCM.md: slow the whole project, not just the message).
final class FCMTransport: NotificationTransport {
    let client: FCMClient
    private let clock: HeraldClock
    /// The project's wait after a quota answer.
    private let pause: ProviderPause

    init(client: FCMClient, clock: HeraldClock) {
        self.client = client
        self.clock = clock
        self.pause = ProviderPause(reason: ProviderReason(rawValue: Self.quotaPause, provider: "FCM"), clock: clock)
    }

    /// The reason of a request held back while the project waits out a quota answer.
    static let quotaPause = "QuotaPause"

    func transportAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> [UInt8]?,
        onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
    ) async -> [Result<ProviderAnswer, TransportFailure>?] {
        if let held = pause.heldBack() {
            return (0..<count).map { index in
                guard request(index) != nil else { return nil }
                onAnswer(index, .success(held))
                return .success(held)
            }
        }
        let clock = self.clock
        let answers = await client.sendAll(count: count, concurrency: concurrency, body: request) {
            [self] index, answer in
            let neutral = Self.neutral(answer, clock: clock)
            noteQuota(neutral)
            onAnswer(index, neutral)
        }
        return answers.map { $0.map { Self.neutral($0, clock: clock) } }
    }

    func transport(_ request: [UInt8]) async throws(TransportFailure) -> ProviderAnswer {
        if let held = pause.heldBack() { return held }
        do {
            let answer = Self.answer(try await client.send(request), clock: clock)
            noteQuota(.success(answer))
            return answer
        } catch {
            throw TransportFailure(code: error.code.description)
        }
    }

    /// A `QUOTA_EXCEEDED` with a `Retry-After`: the whole project waits until then.
    private func noteQuota(_ answer: Result<ProviderAnswer, TransportFailure>) {
        guard case .success(let answer) = answer, answer.reason?.rawValue == "QUOTA_EXCEEDED" else { return }
        pause.pause(for: answer)
    }

    var settlement: any SettlementTable { FCMSettlementTable() }

    static func answer(_ response: WireResponse, clock: HeraldClock) -> ProviderAnswer {
        // A 200's body (the message's name) means nothing to the pipeline: only an error's body is read.
        if response.status == 200 { return ProviderAnswer(status: 200) }
        return ProviderAnswer(
            FCMAnswer(status: response.status, body: response.body), retryAfter: response.retryAfter,
            now: clock.unixSeconds)
    }

    private static func neutral(_ answer: Result<WireResponse, TransportError>, clock: HeraldClock) -> Result<
        ProviderAnswer, TransportFailure
    > {
        switch answer {
        case .success(let response): .success(Self.answer(response, clock: clock))
        case .failure(let error): .failure(TransportFailure(code: error.code.description))
        }
    }
}

/// A share's FCM requests: the job's message encoded once per variant (locale and badge), or the parts written at
/// intake, each device's target spliced in when its request is made.
final class FCMRequestList: RequestSource {
    /// What each device's body is written from.
    enum Messages: Sendable {
        /// One template per variant, and each device's template index when devices get different messages (nil:
        /// all get the first).
        case templates([FCMMessageTemplate], variantOf: [Int]?)
        /// The parts a small job's message was written into at intake, with the send's TTL and channel: each body
        /// written whole from them, one buffer per device.
        case parts(FCMMessageParts, ttl: Int64?, channelID: String?)
    }

    let tokens: [DeviceToken]
    private let kinds: [FCMTarget.Kind]
    private let messages: Messages

    init(tokens: [DeviceToken], kinds: [FCMTarget.Kind], messages: Messages) {
        self.tokens = tokens
        self.kinds = kinds
        self.messages = messages
    }

    subscript(index: Int) -> [UInt8] {
        let target = FCMTarget(trustedKind: kinds[index], value: tokens[index].hex)
        switch messages {
        case .templates(let templates, let variantOf): return templates[variantOf?[index] ?? 0].body(for: target)
        case .parts(let parts, let ttl, let channelID): return parts.body(for: target, ttl: ttl, channelID: channelID)
        }
    }
}
