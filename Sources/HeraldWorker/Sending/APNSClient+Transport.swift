import APNSCore
import HeraldCore
import PushTransport

/// APNs' client as a `NotificationTransport`: its outcomes in the provider-neutral terms, its table APNs'.
extension APNSClient: NotificationTransport {
    func transportAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> APNSRequest?,
        onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
    ) async -> [Result<ProviderAnswer, TransportFailure>?] {
        let answers = await sendAll(count: count, concurrency: concurrency, request: request) { index, answer in
            onAnswer(index, Self.neutral(answer))
        }
        return answers.map { $0.map(Self.neutral) }
    }

    func transport(_ request: APNSRequest) async throws(TransportFailure) -> ProviderAnswer {
        do {
            return ProviderAnswer(try await send(request))
        } catch {
            throw TransportFailure(code: error.code.description)
        }
    }

    var settlement: any SettlementTable { APNSSettlementTable() }

    private static func neutral(_ answer: Result<APNSOutcome, TransportError>) -> Result<
        ProviderAnswer, TransportFailure
    > {
        switch answer {
        case .success(let outcome): .success(ProviderAnswer(outcome))
        case .failure(let error): .failure(TransportFailure(code: error.code.description))
        }
    }
}
