/// The transport's own retries of one request, whatever its provider: a try the server provably did not process
/// (a refused stream, a stream above a GOAWAY's last stream id) is sent again a bounded number of times, and one its
/// connection never sent moves to another connection, bounded so that a server that keeps going away cannot loop
/// us. A provider's answers are its client's to judge.
struct TransportRetries {
    /// How many times one request is sent when the server provably did not process the earlier tries.
    static let maximumAttempts = 3
    /// How many times one request moves to another connection without having been sent.
    static let maximumRequeues = 10

    private var refusals = 0
    private var requeues = 0

    /// Counts a try that was not an answer; throws its error when the request may not be tried again (a failure,
    /// or a refusal or requeue over its bound).
    mutating func another(after result: StreamResult) throws(TransportError) {
        switch result {
        case .refused(let error):
            refusals += 1
            guard refusals < Self.maximumAttempts else { throw error }
        case .notSent(let error):
            requeues += 1
            guard requeues <= Self.maximumRequeues else { throw error }
        case .failure(let error):
            throw error
        case .response:
            break
        }
    }
}
