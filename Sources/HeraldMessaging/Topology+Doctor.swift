import RabbitMQ

extension Topology {
    /// The arguments an earlier Herald declared queue `name` with (without the arguments added since), which
    /// `declare(on:)` accepts as they are; nil for a queue other than the work and webhook queues, or when nothing
    /// was added. `herald doctor` reports such a queue as a warning rather than a failure.
    public func earlierArguments(of name: String) -> AMQPTable? {
        guard Self.upgradable(name, of: self), let current = queues.first(where: { $0.name == name })?.arguments
        else { return nil }
        var earlier = current
        for later in Self.laterArguments { earlier[later] = nil }
        return earlier == current ? nil : earlier
    }
}
