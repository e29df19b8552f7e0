import Crypto

/// Everything the simulator's connections share: the subscriptions and their keys, what was answered, the VAPID
/// tokens seen, who waits and the fault counters. A value type behind the simulator's `Mutex`; events that wake
/// waiters return their continuations, to resume outside the lock.
struct SimulatorState {
    /// What a waiter counts.
    enum WaitKind: Sendable {
        case records
        case requests
    }

    /// A subscription the simulator holds the private half of.
    struct Keys: Sendable {
        var privateKey: P256.KeyAgreement.PrivateKey
        var auth: [UInt8]
        /// The `applicationServerKey` it was made with (raw 65 bytes), if one was given.
        var applicationServerKey: [UInt8]?
    }

    /// What the path's subscription id stands for.
    enum Fate: Sendable {
        case registered(Keys)
        /// Accepted without keys (``WebPushSimulatorConfiguration/acceptAnyKeysForPrefixes``).
        case anyKeys
        case unknown
        case gone
    }

    private struct Waiter {
        var kind: WaitKind
        var count: Int
        var continuation: CheckedContinuation<Void, Never>
    }

    /// The most verified tokens remembered (their signatures are not checked again); past it the cache starts over.
    static let verifiedTokenLimit = 10_000

    private(set) var records: [WebPushSimulatorRecord] = []
    private(set) var requests: [WebPushSimulatorRequestRecord] = []
    private(set) var counts: [String: Int] = [:]
    private(set) var undecryptableCount = 0
    private var subscriptions: [String: Keys] = [:]
    private var unsubscribed: Set<String> = []
    /// Per `aud`: the SHA-256 of every distinct JWT that verified.
    private var tokensByAudience: [String: Set<String>] = [:]
    /// `k ‖ "." ‖ JWT` hash → claims, for tokens whose signature verified.
    private var verifiedTokens: [String: VAPIDClaims] = [:]
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterID = 0
    private var nextMessageID = 1
    /// Per injected-failure rule: eligible requests seen and times fired.
    private var failureCounters: [(seen: Int, fired: Int)]

    init(failureRules: Int) {
        failureCounters = Array(repeating: (0, 0), count: failureRules)
    }

    // MARK: Subscriptions

    /// Registers (or replaces) a subscription; an unsubscribed id comes back to life.
    mutating func add(_ keys: Keys, id: String) {
        subscriptions[id] = keys
        unsubscribed.remove(id)
    }

    /// Whether `id` is taken (registered or unsubscribed).
    func contains(_ id: String) -> Bool {
        subscriptions[id] != nil || unsubscribed.contains(id)
    }

    /// Forgets the keys of `id`; its endpoint answers 410 from now on.
    mutating func unsubscribe(_ id: String) {
        subscriptions[id] = nil
        unsubscribed.insert(id)
    }

    /// What `id` stands for, registered subscriptions and unsubscriptions before the configured prefixes.
    func fate(of id: String, configuration: WebPushSimulatorConfiguration) -> Fate {
        if let keys = subscriptions[id] { return .registered(keys) }
        if unsubscribed.contains(id) { return .gone }
        if configuration.goneIDPrefixes.contains(where: id.hasPrefix) { return .gone }
        if configuration.unknownIDPrefixes.contains(where: id.hasPrefix) { return .unknown }
        if configuration.acceptAnyKeysForPrefixes.contains(where: id.hasPrefix) { return .anyKeys }
        return .unknown
    }

    // MARK: VAPID tokens

    /// The claims of a token whose signature by `key` verified before.
    func verifiedClaims(cacheKey: String) -> VAPIDClaims? {
        verifiedTokens[cacheKey]
    }

    /// Remembers a token whose signature verified.
    mutating func rememberVerified(_ claims: VAPIDClaims, cacheKey: String) {
        if verifiedTokens.count >= Self.verifiedTokenLimit { verifiedTokens.removeAll(keepingCapacity: true) }
        verifiedTokens[cacheKey] = claims
    }

    /// Counts a token that passed every VAPID check, by its audience.
    mutating func sawToken(hash: String, audience: String) {
        tokensByAudience[audience, default: []].insert(hash)
    }

    /// How many distinct tokens for `audience` passed every VAPID check.
    func distinctTokens(audience: String) -> Int {
        tokensByAudience[audience]?.count ?? 0
    }

    // MARK: Answers and waiters

    /// The next message id.
    mutating func messageID() -> String {
        defer { nextMessageID += 1 }
        return "m\(nextMessageID)"
    }

    /// Records a request with its answer, and an accepted message; returns the waiters now satisfied.
    mutating func answered(_ request: WebPushSimulatorRequestRecord, record: WebPushSimulatorRecord?)
        -> [CheckedContinuation<Void, Never>]
    {
        let key = request.reason.map { "\(request.status) \($0)" } ?? String(request.status)
        counts[key, default: 0] += 1
        requests.append(request)
        if let record {
            records.append(record)
            if record.decryptionFailure != nil { undecryptableCount += 1 }
        }
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

    /// Advances the injected-failure counters for an otherwise acceptable request and returns the rule that fires.
    mutating func injectedFailure(for id: String, rules: [WebPushInjectedFailure]) -> WebPushInjectedFailure? {
        for (index, rule) in rules.enumerated() {
            if let prefix = rule.idPrefix, !id.hasPrefix(prefix) { continue }
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
