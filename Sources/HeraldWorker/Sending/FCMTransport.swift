import APNSCore
import FCMCore
import HeraldCore
import PushTransport

/// FCM's client as a `NotificationTransport`: its answers read with FCMCore (the FcmError code, whether it names the
/// token, `Retry-After` against the worker's clock) in the provider-neutral terms, its table FCM's. A request is a
/// `messages:send` body.
final class FCMTransport: NotificationTransport {
    let client: FCMClient
    private let clock: HeraldClock

    init(client: FCMClient, clock: HeraldClock) {
        self.client = client
        self.clock = clock
    }

    func transportAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> [UInt8]?,
        onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
    ) async -> [Result<ProviderAnswer, TransportFailure>?] {
        let clock = self.clock
        let answers = await client.sendAll(count: count, concurrency: concurrency, body: request) { index, answer in
            onAnswer(index, Self.neutral(answer, clock: clock))
        }
        return answers.map { $0.map { Self.neutral($0, clock: clock) } }
    }

    func transport(_ request: [UInt8]) async throws(TransportFailure) -> ProviderAnswer {
        do {
            return Self.answer(try await client.send(request), clock: clock)
        } catch {
            throw TransportFailure(code: error.code.description)
        }
    }

    var settlement: any SettlementTable { FCMSettlementTable() }

    static func answer(_ response: WireResponse, clock: HeraldClock) -> ProviderAnswer {
        ProviderAnswer(
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

/// A share's FCM requests: the job's message encoded once per variant (locale and badge), each device's target
/// spliced into it when its request is made.
final class FCMRequestList: RequestSource {
    let tokens: [DeviceToken]
    private let kinds: [FCMTarget.Kind]
    private let templates: [FCMMessageTemplate]
    /// Each device's template index when devices get different messages; nil: all get the first.
    private let variantOf: [Int]?

    init(tokens: [DeviceToken], kinds: [FCMTarget.Kind], templates: [FCMMessageTemplate], variantOf: [Int]?) {
        self.tokens = tokens
        self.kinds = kinds
        self.templates = templates
        self.variantOf = variantOf
    }

    subscript(index: Int) -> [UInt8] {
        let template = templates[variantOf?[index] ?? 0]
        return template.body(for: FCMTarget(trustedKind: kinds[index], value: tokens[index].hex))
    }
}
