import RabbitMQ

extension Topology {
    /// The arguments an earlier Herald declared work queue `name` with (without the arguments added since), which
    /// `declare(on:)` accepts as they are; nil for a queue other than the work queues, or when nothing was added.
    /// `herald doctor` reports such a queue as a warning rather than a failure.
    public func earlierArguments(of name: String) -> AMQPTable? {
        guard name == jobs || name == batches else { return nil }
        var earlier = workQueueArguments
        for later in Self.laterArguments { earlier[later] = nil }
        return earlier == workQueueArguments ? nil : earlier
    }
}
