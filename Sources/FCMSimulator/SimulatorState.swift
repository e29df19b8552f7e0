/// Everything the simulator's connections share: what was answered, the access tokens minted, who waits for
/// records and the fault counters. A value type behind the simulator's `Mutex`; events that wake waiters return
/// their continuations, to resume outside the lock.
struct SimulatorState {
    /// What a waiter counts.
    enum WaitKind: Sendable {
        case records
        case requests
    }

    /// An access token the token endpoint minted.
    struct Grant: Sendable, Hashable {
        var clientEmail: String
        var expiresAt: Int64
    }

    private struct Waiter {
        var kind: WaitKind
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    /// The most live access tokens kept; past it, expired ones are dropped (and if none are, every one).
    static let grantLimit = 100_000

    private(set) var records: [FCMSimulatorRecord] = []
    private(set) var requests: [FCMSimulatorRequestRecord] = []
    private(set) var counts: [String: Int] = [:]
    private(set) var mints: [String: Int] = [:]
    private var grants: [String: Grant] = [:]
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterID = 0
    private var nextMessageID = 1
    /// Per injected-failure rule: eligible requests seen and times fired.
    private var failureCounters: [(seen: Int, fired: Int)]

    init(failureRules: Int) {
        failureCounters = Array(repeating: (0, 0), count: failureRules)
    }

    /// Remembers a minted access token for `clientEmail` and counts the mint.
    mutating func mint(_ accessToken: String, for clientEmail: String, expiresAt: Int64, now: Int64) {
        if grants.count >= Self.grantLimit {
            grants = grants.filter { $0.value.expiresAt > now }
            if grants.count >= Self.grantLimit { grants.removeAll() }
        }
        grants[accessToken] = Grant(clientEmail: clientEmail, expiresAt: expiresAt)
        mints[clientEmail, default: 0] += 1
    }

    /// The grant of a live access token; nil for an unknown or expired one.
    func grant(for accessToken: String, now: Int64) -> Grant? {
        guard let grant = grants[accessToken], grant.expiresAt > now else { return nil }
        return grant
    }

    /// Forgets every access token (``FCMSimulator/revokeAccessTokens()``).
    mutating func revokeGrants() {
        grants.removeAll()
    }

    /// The next message id.
    mutating func messageID() -> String {
        defer { nextMessageID += 1 }
        return "0:\(nextMessageID)"
    }

    /// Records a request with its answer, and an accepted message; returns the waiters now satisfied.
    mutating func answered(_ request: FCMSimulatorRequestRecord, record: FCMSimulatorRecord?)
        -> [CheckedContinuation<Void, Never>]
    {
        let key = request.errorCode.map { "\(request.status) \($0)" } ?? String(request.status)
        counts[key, default: 0] += 1
        requests.append(request)
        if let record { records.append(record) }
        let ready = waiters.filter { $0.value.count <= total($0.value.kind) }
        for id in ready.keys { waiters[id] = nil }
        return ready.map(\.value.continuation)
    }

    private func total(_ kind: WaitKind) -> Int {
        switch kind {
        case .records: records.count
        case .requests: requests.count
        }
    }

    /// Registers a waiter, or returns nil if enough are already there.
    mutating func addWaiter(_ kind: WaitKind, count: Int, continuation: CheckedContinuation<Void, Never>) -> Int? {
        guard total(kind) < count else { return nil }
        let id = nextWaiterID
        nextWaiterID += 1
        waiters[id] = Waiter(kind: kind, count: count, continuation: continuation)
        return id
    }

    /// Removes a cancelled waiter, returning its continuation if it was still waiting.
    mutating func removeWaiter(_ id: Int) -> CheckedContinuation<Void, Never>? {
        waiters.removeValue(forKey: id)?.continuation
    }

    /// Removes every waiter (on stop).
    mutating func removeAllWaiters() -> [CheckedContinuation<Void, Never>] {
        defer { waiters = [:] }
        return waiters.values.map(\.continuation)
    }

    /// Advances the injected-failure counters for an otherwise accepted send and returns the rule that fires.
    mutating func injectedFailure(for target: FCMSimulatorTarget, rules: [FCMInjectedFailure]) -> FCMInjectedFailure? {
        for (index, rule) in rules.enumerated() {
            if let prefix = rule.tokenPrefix, !(target.deviceValue?.hasPrefix(prefix) ?? false) { continue }
            if let times = rule.times, failureCounters[index].fired >= times { continue }
            failureCounters[index].seen += 1
            if failureCounters[index].seen % rule.every == 0 {
                failureCounters[index].fired += 1
                return rule
            }
        }
        return nil
    }
}
