import APNSChannels
import Metrics

/// What a channel broadcast's answer comes to, as values for `ChannelCommit`: sent (the job done), or refused (the
/// job failed with the reason; a channel APNs says it does not know is forgotten too). Pure but for its metric.
enum ChannelSettlement {
    /// A broadcast's end.
    struct Plan: Sendable, Equatable {
        /// APNs took it.
        var sent: Bool
        /// Why not, as recorded on the job: `<reason>: <message>`.
        var failure: String?
        /// The reason alone, for the metric and the log.
        var reason: String
        /// Forget the channel's record: APNs no longer knows it (deleted elsewhere, or an environment mix-up).
        var forgetChannel: Bool = false
    }

    /// The plan for APNs' last answer.
    static func plan(_ answer: ChannelAnswer) -> Plan {
        switch answer {
        case .answered(let result) where result.isSuccess:
            return Plan(sent: true, failure: nil, reason: "")
        case .answered(let result):
            var plan = refusal(reason: answer.reason, "APNs refused the broadcast (\(result.status))")
            plan.forgetChannel = answer.reason == ChannelReason.channelNotRegistered
            return plan
        case .failed(let reason, let message, _):
            return refusal(reason: reason, message)
        }
    }

    /// A broadcast refused with `reason`, before or by APNs.
    static func refusal(reason: String, _ message: String) -> Plan {
        Plan(sent: false, failure: "\(reason): \(message)", reason: reason)
    }

    /// `herald_live_activity_broadcasts_total{outcome, reason}`. The reason is APNs' (a word such as
    /// `ChannelNotRegistered`); anything else an endpoint answers counts as `other`, so the label stays bounded.
    static func count(_ outcome: String, reason: String) {
        let bounded = reason.utf8.count <= 40 && reason.unicodeScalars.allSatisfy { $0.properties.isAlphabetic }
        Counter(
            label: "herald_live_activity_broadcasts_total",
            dimensions: [("outcome", outcome), ("reason", bounded ? reason : "other")]
        ).increment()
    }
}
