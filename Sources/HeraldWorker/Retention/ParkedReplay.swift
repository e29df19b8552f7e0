import HeraldMessaging
import HeraldStore
import RabbitMQ

/// Replays parked messages (`herald parked replay`): each matching one goes back to the work queue it was parked
/// from (`ParkedMessages.replay`). A job the worker rejected at intake (an unknown app, say) was recorded as failed
/// so that copies of it are not taken again; that record is forgotten first, so the replayed job is taken as new.
/// The parked copy is dropped only once the broker confirmed the replayed one. A message parked as sent but not
/// settled is replayed only if `force` (its notifications were sent: replaying sends them again).
package func replayParked(
    _ filter: ParkedMessageFilter, limit: Int, force: Bool = false, connection: AMQPConnection, topology: Topology,
    store: Store
) async throws -> ParkedMessages.Pass {
    let parked = ParkedMessages(connection: connection, topology: topology)
    return try await parked.replay(filter, limit: limit, force: force) { message in
        guard message.originQueue == topology.jobs, let app = message.app, let id = message.jobID,
            let reason = message.reason
        else { return }
        try await store.forgetRejectedJob(app: app, id: id, reason: reason)
    }
}
