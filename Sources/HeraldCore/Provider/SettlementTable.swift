/// What an answer means for the notification, before retries are counted: a provider's table gives it, and
/// `disposition(for:attempt:policy:jitter:table:)` turns it into what the pipeline does.
public enum Verdict: Sendable, Hashable {
    /// The provider took it.
    case delivered
    /// The token is dead: prune the device (only if it registered before `invalidSince`, when given).
    case prune
    /// The server or the connection, not the notification: try again (after `Retry-After`, if given).
    case transient
    /// This device failed for a reason that retrying does not change; keep the device.
    case failDevice
    /// The whole job is wrong for every device (topic, credentials, payload): stop it.
    case failJob
}

/// One provider's table of answers: every status and reason it documents, each with its verdict, and the reason
/// for an answer that gave none. A pure function, table-tested per provider; the second provider (FCM) brings its
/// own (issue 36).
public protocol SettlementTable: Sendable {
    /// The provider as a job's error names it: `APNs`, `FCM`.
    var provider: String { get }
    /// The verdict on `answer`.
    func verdict(on answer: ProviderAnswer) -> Verdict
}

extension SettlementTable {
    /// The reason to record for a failed answer: the provider's, or `HTTP<status>` when it gave none.
    public func reason(of answer: ProviderAnswer) -> ProviderReason {
        answer.reason ?? ProviderReason(rawValue: "HTTP\(answer.status)", provider: provider)
    }
}
