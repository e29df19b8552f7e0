import NIOCore
import Synchronization

/// What a batch needs of the client that sends it, in the providers' shared terms: its pool, which first tries are
/// final, what a try teaches about its connection, and the metrics of a final result. Not generic, so that the
/// per-answer path runs specialised code (a generic batch reached through an existential ran unspecialised, with a
/// metadata lookup per answer).
protocol BatchClient: AnyObject, Sendable {
    var pool: ConnectionPool { get }
    /// Whether a first try's result is final; if not, ``PooledClient/sendWithRetries(_:after:)`` finishes it after
    /// the batch (a refused stream, a request its connection never sent, an expired credential).
    func isFinal(_ result: StreamResult) -> Bool
    /// What one try teaches about its connection; gives its room back.
    func finish(_ lease: ConnectionPool.Lease, with result: StreamResult)
    /// Counts a final result.
    func record(_ result: Result<WireResponse, TransportError>)
}

/// A provider's client over a ``ConnectionPool``: APNs' client and FCM's are the two; each keeps its own credential,
/// its own requests and answers, and its own rules for which answers the transport retries.
protocol PooledClient: BatchClient {
    /// One request as the provider's client takes it.
    associatedtype Request: Sendable
    /// The provider's answer.
    associatedtype Answer: Sendable
    /// What the `authorization` header carries (a provider token, an access token).
    associatedtype Credential: Sendable

    /// The credential a batch's requests carry, nil when requests carry none (APNs' certificates).
    func credential() async throws(TransportError) -> Credential?
    /// The `authorization` value's token.
    static func bearer(of credential: Credential) -> String
    /// The request on the wire.
    func wire(_ request: Request) -> WireRequest
    /// The request a wire form was made from.
    static func request(of wire: WireRequest) -> Request
    /// The provider's answer read from what the server sent.
    static func answer(_ response: WireResponse) -> Answer
    /// Sends with the transport's retries, continuing from a first try a batch made; returns what the server
    /// answered last.
    func sendWithRetries(
        _ request: Request, after first: (result: StreamResult, credential: Credential?)?
    ) async throws(TransportError) -> WireResponse
}

extension PooledClient {
    /// Sends many requests with at most `concurrency` in flight and returns each one's result, in order.
    ///
    /// The same rules as a single send apply to each request, but answers are taken on the event loop where they
    /// arrive, and each answer sends the next request from there: a batch costs one task, not one task wake-up per
    /// request. A try that needs the transport's retries (a refused stream, a request its connection never sent, an
    /// expired credential) is finished with them after the batch.
    ///
    /// - Parameters:
    ///   - count: how many requests.
    ///   - request: makes the i-th request when its turn comes, or returns nil to skip it (its result is nil).
    ///   - onAnswer: called once with each sent request's final result, on any thread, as it arrives.
    /// - Returns: each request's result, nil for those skipped. If the task is cancelled, requests not yet sent
    ///   fail with ``TransportError/Code/cancelled``.
    func sendBatch(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> Request?,
        onAnswer: @escaping @Sendable (Int, Result<Answer, TransportError>) -> Void
    ) async -> [Result<Answer, TransportError>?] {
        guard count > 0 else { return [] }
        let window = max(1, concurrency)
        let credential: Credential?
        do {
            credential = try await self.credential()
        } catch {
            // Nothing can be sent; those the caller wants sent fail with the reason.
            return (0..<count).map { index in
                guard request(index) != nil else { return nil }
                onAnswer(index, .failure(error))
                return .failure(error)
            }
        }
        let batch = BatchSend(
            client: self,
            count: count,
            concurrency: window,
            bearerToken: credential.map(Self.bearer(of:)),
            request: { index in request(index).map(self.wire) },
            onAnswer: { index, result in onAnswer(index, result.map(Self.answer)) }
        )
        await withTaskCancellationHandler {
            await batch.run()
        } onCancel: {
            batch.cancel()
        }
        // Tries the transport retries one by one (rare: connections going away, refusals, credential expiry).
        let retries = batch.takeRetries()
        if !retries.isEmpty {
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                for (index, first) in retries {
                    if running == window {
                        await group.next()
                        running -= 1
                    }
                    running += 1
                    group.addTask {
                        let start = NIODeadline.now()
                        let result: Result<WireResponse, TransportError>
                        if Task.isCancelled {
                            result = .failure(
                                TransportError(.cancelled, "cancelled before the request was sent again"))
                        } else {
                            do throws(TransportError) {
                                result = .success(
                                    try await self.sendWithRetries(
                                        Self.request(of: first.request), after: (first.result, credential)))
                            } catch {
                                result = .failure(error)
                            }
                        }
                        batch.answer(index, result, since: start)
                    }
                }
            }
        }
        return batch.takeResults().map { $0?.map(Self.answer) }
    }
}
