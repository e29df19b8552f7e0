import APNSCore
import HeraldCore
import HeraldStore

/// The prune breaker: when BadDeviceToken or DeviceTokenNotForTopic answers are more than `share` of a job's
/// answers (once at least `minimumAnswers` are in), the app is taken to be misconfigured — sandbox tokens sent to
/// production, a wrong topic — not its devices. The job is stopped, and those answers are recorded as delivery
/// failures instead of pruning the devices, so one broadcast cannot delete an app's registry. A 410 Unregistered is a
/// normal dead token and never counts. A pure type: `Settler.settle` asks it before a unit's prunes are
/// planned, and `Settlement` holds the prunes it says to hold.
///
/// Evaluated per batch and across the job's batches: a batch with any suspect answer that does not trip alone reads
/// the job's counts so far (one primary-key read, `Store.pruneBreakerCounts`; `suspect_answers` is kept on the job row
/// by the write-back) and decides on the sum. A healthy batch (no suspect answer) costs nothing. Batches delivered
/// concurrently see each other's counts only once written back, so the cross-batch sum can lag by the batches in
/// flight; each batch of a misconfigured app trips on its own anyway (all its answers are suspect), and a job this
/// worker already stopped prunes no suspect answer (the stop registry).
///
/// It counts only answers a register-only key (embedded in apps, so anyone's) cannot forge: those of devices
/// imported or registered by other keys, or delivered to before (`Settler.pruneBreakerTrip`, schemas/026).
/// The suspect answers of the other, unproven devices are pruned and never trip it.
public struct PruneBreaker: Sendable, Hashable {
    /// The share of answers above which the breaker trips, in (0, 1].
    public var share: Double
    /// Answers needed before the breaker decides at all.
    public var minimumAnswers: Int

    public init(share: Double = 0.5, minimumAnswers: Int = 20) {
        self.share = share
        self.minimumAnswers = minimumAnswers
    }

    /// The answers that count against the app rather than the device: the provider's table says which.
    static func isSuspect(_ reason: ProviderReason) -> Bool {
        reason.countsAgainstApp
    }

    /// Answers and suspect answers, by reason.
    struct Counts: Sendable, Hashable {
        static let badDeviceToken = ProviderReason(APNSReason.badDeviceToken)
        static let notForTopic = ProviderReason(APNSReason.deviceTokenNotForTopic)

        var answers = 0
        var badDeviceToken = 0
        var notForTopic = 0
        /// Suspect answers of the job's earlier batches (the job row does not split them by reason).
        var earlier = 0

        var suspect: Int { badDeviceToken + notForTopic + earlier }

        init(answers: Int = 0, badDeviceToken: Int = 0, notForTopic: Int = 0, earlier: Int = 0) {
            self.answers = answers
            self.badDeviceToken = badDeviceToken
            self.notForTopic = notForTopic
            self.earlier = earlier
        }

        /// Counts APNs' answers among a batch's dispositions (not transient failures nor devices not sent).
        init(_ dispositions: some Sequence<Disposition>) {
            for disposition in dispositions {
                switch disposition {
                case .delivered, .failDevice:
                    answers += 1
                case .prune(let reason, _):
                    answers += 1
                    if reason == Self.badDeviceToken { badDeviceToken += 1 }
                    if reason == Self.notForTopic { notForTopic += 1 }
                case .failJob(let reason):
                    if reason != StopFlag.stopped { answers += 1 }
                case .retry, .exhausted:
                    break
                }
            }
        }
    }

    /// Whether `counts` trip the breaker.
    func trips(_ counts: Counts) -> Bool {
        counts.answers >= minimumAnswers && Double(counts.suspect) > share * Double(counts.answers)
    }

    /// The job's error when the breaker trips: counts by reason, never a token.
    static func reason(_ counts: Counts) -> String {
        let earlier = counts.earlier > 0 ? ", \(counts.earlier) in earlier batches" : ""
        return "pruning stopped: \(counts.suspect) of \(counts.answers) answers were BadDeviceToken or"
            + " DeviceTokenNotForTopic (BadDeviceToken \(counts.badDeviceToken), DeviceTokenNotForTopic"
            + " \(counts.notForTopic)\(earlier)); the app looks misconfigured (wrong APNs environment or topic), so no"
            + " device was pruned for them (recorded as delivery failures)"
    }
}
