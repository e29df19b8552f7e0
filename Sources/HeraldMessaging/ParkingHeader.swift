/// Header names on parked and retried messages, and on a job message the scheduler publishes again to resume its
/// paced planning: the only AMQP headers Herald sets itself.
public enum ParkingHeader {
    /// Why the message was parked (the rule it broke), or why a batch was sent to a retry queue.
    public static let reason = "x-herald-reason"
    /// The attempts a batch (or a parked message) has had so far.
    public static let attempts = "x-herald-attempts"
    /// The queue a parked message was taken from.
    public static let originQueue = "x-herald-origin-queue"
    /// When the message was parked, in seconds since the Unix epoch: what the retention of parked messages
    /// measures their age by (`ParkedMessage.parkedAt`).
    public static let parkedAt = "x-herald-parked-at"
    /// On a job message the scheduler published again to resume the job's paced planning: the planner that paused
    /// it may still hold its planning claim for a moment, so this copy waits for the claim instead of being taken
    /// for a duplicate (which would leave the job paused for ever).
    public static let resumedPlanning = "x-herald-resumed-planning"
}
