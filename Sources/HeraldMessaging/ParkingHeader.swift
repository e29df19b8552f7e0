/// Header names on parked and retried messages: the only AMQP headers Herald sets itself.
public enum ParkingHeader {
    /// Why the message was parked (the rule it broke), or why a batch was sent to a retry queue.
    public static let reason = "x-herald-reason"
    /// The attempts a batch (or a parked message) has had so far.
    public static let attempts = "x-herald-attempts"
    /// The queue a parked message was taken from.
    public static let originQueue = "x-herald-origin-queue"
}
