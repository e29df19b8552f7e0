import APNSCore
import HeraldCore
import HeraldStore

/// One device's result after the in-process retries: what its answers decided, and how many retries it took.
struct DeviceResult: Sendable, Hashable {
    var token: DeviceToken
    var disposition: Disposition
    var retries: Int
}

/// Why a job stops: APNs rejected it as a whole, or the prune breaker tripped.
struct JobStop: Sendable, Hashable {
    var reason: String
    var isBreaker: Bool
}

/// The outcomes counted in `herald_notifications_total`, each with a reason label.
enum NotificationOutcome: String, Sendable, Hashable {
    case sent, pruned, failed, expired, retried
}

/// An (outcome, reason) pair of the notifications metric, counted per batch: each counter lookup hashes its labels.
struct Tally: Hashable, Sendable {
    var outcome: NotificationOutcome
    var reason: String
}

/// What a batch's answers mean, decided without I/O: what to write back for the job, which devices go to the next
/// retry queue or are parked, whether the job stops, and the metric counts. `Commit` carries it out.
struct SettlementPlan: Sendable, Hashable {
    var sent = 0
    /// BadDeviceToken and DeviceTokenNotForTopic answers of devices that are evidence, for the prune breaker's
    /// running count.
    var suspectAnswers = 0
    /// Answers of unproven devices other than deliveries: left out of the breaker's running count.
    var unprovenAnswers = 0
    /// The devices delivered to, when the caller records first deliveries (planned batches).
    var delivered: [DeviceToken] = []
    var prunes: [WriteBack.Prune] = []
    var failures: [WriteBack.Failure] = []
    /// Devices that failed transiently, with their reason, when `next` is `.retry` or `.park`.
    var transient: [DeviceToken] = []
    /// Their reasons, sorted and joined: the retry or park header.
    var transientReasons = ""
    /// Devices counted as needing a delayed retry (each once: on its first batch attempt).
    var retried = 0
    /// The longest wait a provider asked for (`Retry-After`) that was not waited in-process: the retry is not
    /// delivered before it has passed.
    var retryAfter: Duration?
    var next = Next.nothing
    var stop: JobStop?
    var tally: [Tally: Int] = [:]

    /// What happens to the transient failures.
    enum Next: Sendable, Hashable {
        case nothing
        /// Published to the retry queue after `attempt - 1`, as the batch's attempt `attempt`.
        case retry(attempt: Int)
        /// Parked after the batch's last attempt; recorded as failures.
        case park
    }
}

/// Settlement: a pure function from a batch's device results (and the prune breaker's decision) to a plan.
enum Settlement {
    /// - Parameters:
    ///   - attempt: the batch's attempt (1 for a planned batch, 2… for retry batches).
    ///   - maximumAttempts: the attempt after which transient failures are parked instead of retried.
    ///   - holdPrunes: the prune breaker holds suspect answers (recorded as failures, not pruned).
    ///   - breakerStop: the breaker's reason when it tripped on this batch.
    ///   - unproven: the devices (lowercase hex) that are not evidence: registered by a register-only key and never
    ///     delivered to. Their BadDeviceToken and DeviceTokenNotForTopic answers are pruned unless the breaker holds
    ///     prunes, and none of their answers counts towards the breaker.
    ///   - recordsDeliveries: list the devices delivered to, so that their first delivery is recorded.
    static func plan(
        _ results: [DeviceResult],
        attempt: Int,
        maximumAttempts: Int,
        holdPrunes: Bool = false,
        breakerStop: String? = nil,
        unproven: Set<String> = [],
        recordsDeliveries: Bool = false
    ) -> SettlementPlan {
        var plan = SettlementPlan()
        var transient: [(DeviceToken, String)] = []
        var jobFailure: ProviderReason? = nil
        for result in results {
            let token = result.token
            let isUnproven = !unproven.isEmpty && unproven.contains(token.hex)
            switch result.disposition {
            case .delivered:
                plan.sent += 1
                if recordsDeliveries { plan.delivered.append(token) }
            case .prune(let reason, _) where PruneBreaker.isSuspect(reason) && holdPrunes:
                if isUnproven { plan.unprovenAnswers += 1 } else { plan.suspectAnswers += 1 }
                plan.failures.append(.init(token: token, status: 400, reason: "\(reason) (not pruned: breaker)"))
                plan.tally[Tally(outcome: .failed, reason: reason.rawValue), default: 0] += 1
            case .prune(let reason, let timestamp):
                if isUnproven {
                    plan.unprovenAnswers += 1
                } else if PruneBreaker.isSuspect(reason) {
                    plan.suspectAnswers += 1
                }
                plan.prunes.append(.init(token: token, reason: reason.rawValue, apnsTimestamp: timestamp))
                plan.tally[Tally(outcome: .pruned, reason: reason.rawValue), default: 0] += 1
            case .failDevice(let reason):
                if isUnproven { plan.unprovenAnswers += 1 }
                plan.failures.append(.init(token: token, status: nil, reason: reason.rawValue))
                plan.tally[Tally(outcome: .failed, reason: reason.rawValue), default: 0] += 1
            case .exhausted(let reason):
                transient.append((token, reason))
            case .retry(let reason, let delay):
                transient.append((token, reason))
                plan.retryAfter = max(plan.retryAfter ?? .zero, delay)
            case .failJob(let reason):
                if reason != StopFlag.stopped, jobFailure == nil { jobFailure = reason }
                if reason != StopFlag.stopped, isUnproven { plan.unprovenAnswers += 1 }
                plan.failures.append(.init(token: token, status: nil, reason: reason.rawValue))
                let label = reason == StopFlag.stopped ? "job_stopped" : reason.rawValue
                plan.tally[Tally(outcome: .failed, reason: label), default: 0] += 1
            }
        }
        if plan.sent > 0 { plan.tally[Tally(outcome: .sent, reason: ""), default: 0] += plan.sent }

        plan.stop =
            jobFailure.map { JobStop(reason: "\($0.provider) rejected the job: \($0)", isBreaker: false) }
            ?? breakerStop.map { JobStop(reason: $0, isBreaker: true) }
        guard !transient.isEmpty else { return plan }
        guard plan.stop == nil else {
            // The job stops: nothing is retried, the transient failures are recorded as they are.
            for (token, reason) in transient { plan.failures.append(.init(token: token, status: nil, reason: reason)) }
            return plan
        }
        plan.transient = transient.map(\.0)
        plan.transientReasons = Set(transient.map(\.1)).sorted().joined(separator: ", ")
        if attempt < maximumAttempts {
            plan.next = .retry(attempt: attempt + 1)
            // Devices that needed a delayed retry, each counted once (when it first leaves for the retry queues).
            if attempt == 1 { plan.retried = transient.count }
            plan.tally[Tally(outcome: .retried, reason: "transient"), default: 0] += transient.count
        } else {
            plan.next = .park
            for (token, reason) in transient {
                plan.failures.append(.init(token: token, status: nil, reason: "\(reason) (after \(attempt) attempts)"))
            }
            plan.tally[Tally(outcome: .failed, reason: "exhausted"), default: 0] += transient.count
        }
        return plan
    }
}

extension WriteBack {
    /// Adds a settlement plan's counts, prunes and failures.
    mutating func add(_ plan: SettlementPlan) {
        sent += plan.sent
        suspectAnswers += plan.suspectAnswers
        unprovenAnswers += plan.unprovenAnswers
        delivered += plan.delivered
        retried += plan.retried
        prunes += plan.prunes
        failures += plan.failures
    }
}
