/// Everything the simulator's connections share: what was answered, who waits for records, the fault counters and
/// the verified-token cache. A value type behind the simulator's `Mutex`; every event returns what to do next.
struct SimulatorState {
    /// What a waiter counts: accepted notifications or accepted broadcasts.
    enum WaitKind: Sendable {
        case records
        case broadcasts
    }

    /// A task waiting in ``APNSSimulator/waitForRecords(count:)`` or ``APNSSimulator/waitForBroadcasts(count:)``.
    struct Waiter {
        var kind: WaitKind
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    /// How a provider token fared the first time it was verified.
    enum TokenVerdict: Sendable {
        case valid(teamID: String, issuedAt: Int64)
        case rejected(Rejection)
    }

    private(set) var records: [APNSSimulatorRecord] = []
    private(set) var broadcasts: [APNSSimulatorBroadcastRecord] = []
    private(set) var counts: [String: Int] = [:]
    /// Provider tokens verified and found valid, once each (`APNSSimulator.providerTokensSeen`).
    private(set) var validTokensSeen = 0
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterID = 0
    /// Per injected-failure rule: eligible requests seen and times fired.
    private var failureCounters: [(seen: Int, fired: Int)]
    /// Per rule with `timesPerToken`: how often it has failed each token.
    private var failuresPerToken: [Int: [String: Int]] = [:]
    private var tokenCache: [String: TokenVerdict] = [:]
    /// Bounds the cache; a runaway client signing per request must not grow it forever.
    private let tokenCacheLimit = 4096

    /// Streams refused by ``APNSSimulatorConfiguration/refusedStreamTokenPrefixes`` so far.
    private var refusedStreams = 0

    /// Whether one more stream may be refused under `limit`; counts it if so.
    mutating func refuseStream(limit: Int) -> Bool {
        guard refusedStreams < limit else { return false }
        refusedStreams += 1
        counts["refused", default: 0] += 1
        return true
    }

    init(failureRules: Int) {
        self.failureCounters = Array(repeating: (0, 0), count: failureRules)
    }

    /// Counts an answer; for a 200, appends the record and returns the waiters it satisfies (to resume outside the
    /// lock).
    mutating func answered(_ countKey: String, record: APNSSimulatorRecord?) -> [CheckedContinuation<Void, Never>] {
        counts[countKey, default: 0] += 1
        guard let record else { return [] }
        records.append(record)
        return readyWaiters(.records)
    }

    /// Counts an answer of the broadcast endpoints; for an accepted broadcast, appends it and returns the waiters it
    /// satisfies (to resume outside the lock).
    mutating func answered(_ countKey: String, broadcast: APNSSimulatorBroadcastRecord?)
        -> [CheckedContinuation<Void, Never>]
    {
        counts[countKey, default: 0] += 1
        guard let broadcast else { return [] }
        broadcasts.append(broadcast)
        return readyWaiters(.broadcasts)
    }

    private func total(_ kind: WaitKind) -> Int {
        switch kind {
        case .records: records.count
        case .broadcasts: broadcasts.count
        }
    }

    private mutating func readyWaiters(_ kind: WaitKind) -> [CheckedContinuation<Void, Never>] {
        let reached = total(kind)
        let ready = waiters.filter { $0.value.kind == kind && $0.value.count <= reached }
        for id in ready.keys { waiters[id] = nil }
        return ready.map(\.value.continuation)
    }

    /// Registers a waiter, or returns nil if enough records (or broadcasts) are already there.
    mutating func addWaiter(_ kind: WaitKind = .records, count: Int, continuation: CheckedContinuation<Void, Never>)
        -> Int?
    {
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

    /// The cached verdict for a token string.
    func cachedVerdict(for token: String) -> TokenVerdict? {
        tokenCache[token]
    }

    /// Caches a verdict.
    mutating func cache(_ verdict: TokenVerdict, for token: String) {
        if case .valid = verdict { validTokensSeen += 1 }
        if tokenCache.count >= tokenCacheLimit { tokenCache.removeAll(keepingCapacity: true) }
        tokenCache[token] = verdict
    }

    /// Advances the injected-failure counters for an otherwise accepted request and returns the rule that fires.
    mutating func injectedFailure(for deviceToken: String, rules: [InjectedFailure]) -> InjectedFailure? {
        for (index, rule) in rules.enumerated() {
            if let prefix = rule.tokenPrefix, !deviceToken.hasPrefix(prefix) { continue }
            if let times = rule.times, failureCounters[index].fired >= times { continue }
            if let perToken = rule.timesPerToken,
                failuresPerToken[index, default: [:]][deviceToken, default: 0] >= perToken
            {
                continue
            }
            failureCounters[index].seen += 1
            if failureCounters[index].seen % rule.every == 0 {
                failureCounters[index].fired += 1
                if rule.timesPerToken != nil { failuresPerToken[index, default: [:]][deviceToken, default: 0] += 1 }
                return rule
            }
        }
        return nil
    }
}
