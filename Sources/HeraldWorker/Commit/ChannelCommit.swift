import HeraldCore
import HeraldStore
import Logging

/// Carries out a channel broadcast's plan: the job's end (done with one targeted and sent, or failed with the
/// reason), and the channel's record forgotten when APNs no longer knows it.
struct ChannelCommit: Sendable {
    let store: Store
    let logger: Logger

    func carryOut(_ plan: ChannelSettlement.Plan, job: PreparedJob, channel: String) async throws -> JobState {
        if plan.sent {
            ChannelSettlement.count("sent", reason: "")
            try await store.finishBroadcast(job.key, sent: true, reason: nil)
            return .done
        }
        if plan.forgetChannel { try await store.deleteChannelRecord(app: job.app, id: channel) }
        ChannelSettlement.count("failed", reason: plan.reason)
        logger.warning("broadcast not sent", metadata: ["reason": "\(plan.reason)"])
        try await store.finishBroadcast(job.key, sent: false, reason: plan.failure)
        return .failed
    }

    /// Ends a job a newer event of its channel superseded, unsent.
    func supersede(_ job: PreparedJob, by newer: String, channel: String) async throws -> JobState {
        try await store.endUnsentJob(
            job.key, state: .cancelled, targetKind: "channel",
            reason: "superseded: job \(newer) carries a newer event of channel \(channel.prefix(64))")
        return .cancelled
    }
}
