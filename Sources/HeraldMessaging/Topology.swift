import RabbitMQ

/// The queues Herald uses, declared idempotently at start-up from this one definition (and exported as a RabbitMQ
/// definitions file by `herald topology export`).
///
/// The one place a queue is named: the worker, the API, the producer library and every `herald` command derive their
/// queue names from a `Topology`, so a prefix or a new queue cannot disagree between them.
public struct Topology: Sendable, Hashable {
    /// classic or quorum queues.
    public enum QueueType: String, Sendable, Hashable, CaseIterable {
        case classic
        case quorum
    }

    /// The prefix of every queue name unless one is given: `herald.jobs`, `herald.batches`, …
    public static let defaultPrefix = "herald"

    /// The name prefix, `herald` by default (tests and tenants sharing a broker use their own).
    public var prefix: String
    /// The queue type of the work queues.
    public var queueType: QueueType
    /// Delays of the retry queues, one queue each; attempt n+1 of a batch waits in the n-th.
    public var retryDelays: [Duration]
    /// Quorum queues: deliveries of one message before the broker drops it as poison.
    public var deliveryLimit: Int

    public init(
        prefix: String = Topology.defaultPrefix,
        queueType: QueueType = .classic,
        retryDelays: [Duration] = [.seconds(1), .seconds(10), .seconds(60), .seconds(600)],
        deliveryLimit: Int = 20
    ) {
        self.prefix = prefix
        self.queueType = queueType
        self.retryDelays = retryDelays
        self.deliveryLimit = deliveryLimit
    }

    /// Where producers publish jobs (default exchange, routing key = queue name).
    public var jobs: String { prefix + ".jobs" }
    /// Where the planner publishes batches of large audiences.
    public var batches: String { prefix + ".batches" }
    /// Where messages that can never succeed go, with `x-herald-reason`.
    public var parked: String { prefix + ".parked" }
    /// The topic exchange of events (`job.finished.<app>`, `job.failed.<app>`, `token.pruned.<app>`, …), for the
    /// apps that have them; subscribers bind their own queues (schemas/events.schema.json).
    public var events: String { prefix + ".events" }

    /// The retry queue for the attempt after `attempt` (attempt 1 failed → the first delay).
    public func retryQueue(after attempt: Int) -> String {
        let index = min(max(attempt - 1, 0), retryDelays.count - 1)
        return retryQueueName(retryDelays[index])
    }

    /// The delay queue a message waits in for about `wait`: the one with the longest delay that is not longer, else
    /// the shortest. A throttled batch whose turn is further off comes back, and is sent back, until it is near.
    public func delayQueue(for wait: Duration) -> String {
        let sorted = retryDelays.sorted()
        return retryQueueName(sorted.last { $0 <= wait } ?? sorted[0])
    }

    /// Every retry queue with its delay.
    public var retryQueues: [(name: String, delay: Duration)] { retryDelays.map { (retryQueueName($0), $0) } }

    func retryQueueName(_ delay: Duration) -> String {
        let ms = Self.milliseconds(delay)
        let label =
            ms % 60_000 == 0 ? "\(ms / 60_000)m" : ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
        return prefix + ".retry." + label
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The arguments of a work queue.
    public var workQueueArguments: AMQPTable {
        switch queueType {
        case .classic: return [:]
        case .quorum:
            // A message past the delivery limit is dead-lettered to the parking queue, never dropped. The worker
            // parks such a message itself first (`maximumDeliveries`, with its reason); this is the backstop.
            return [
                "x-queue-type": .string("quorum"), "x-delivery-limit": .int(Int64(deliveryLimit)),
                Self.deadLetterExchange: .string(""), Self.deadLetterRoutingKey: .string(parked),
            ]
        }
    }

    /// The arguments of a retry queue: messages wait out the TTL, then dead-letter back to the batches queue.
    /// One queue per delay, so a long delay never blocks a short one (no head-of-line blocking).
    public func retryQueueArguments(delay: Duration) -> AMQPTable {
        var arguments: AMQPTable = [
            "x-message-ttl": .int(Self.milliseconds(delay)),
            "x-dead-letter-exchange": .string(""),
            "x-dead-letter-routing-key": .string(batches),
        ]
        if queueType == .quorum { arguments["x-queue-type"] = .string("quorum") }
        return arguments
    }

    /// The arguments of the parking queue.
    public var parkedArguments: AMQPTable {
        queueType == .quorum ? ["x-queue-type": .string("quorum")] : [:]
    }

    /// Every queue (all durable) with its arguments, in declaration order: the one definition that `declare(on:)`
    /// declares and `herald topology export` writes out.
    public var queues: [(name: String, arguments: AMQPTable)] {
        [(jobs, workQueueArguments), (batches, workQueueArguments)]
            + retryQueues.map { ($0.name, retryQueueArguments(delay: $0.delay)) }
            + [(parked, parkedArguments)]
    }

    /// Declares every queue, idempotently.
    ///
    /// A quorum work queue declared before it had a dead-letter target (Herald before issue 16) is refused with
    /// 406 (its arguments differ); it is then taken as it is, without the target. The worker still parks a
    /// message itself before the delivery limit (`maximumDeliveries`); docs/operations.md's upgrade notes give the policy that
    /// adds the target to such a queue.
    public func declare(on connection: AMQPConnection) async throws {
        try await connection.declareExchange(events, type: "topic")
        for (name, arguments) in queues {
            let refused: AMQPError
            do {
                _ = try await connection.declareQueue(name, durable: true, arguments: arguments)
                continue
            } catch {
                refused = error
            }
            guard refused.replyCode == 406, name == jobs || name == batches, arguments[Self.deadLetterExchange] != nil
            else { throw refused }
            var earlier = arguments
            earlier[Self.deadLetterExchange] = nil
            earlier[Self.deadLetterRoutingKey] = nil
            _ = try await connection.declareQueue(name, durable: true, arguments: earlier)
        }
    }

    /// Deletes every queue and the events exchange, with what they hold: the mirror of `declare(on:)`, for tests
    /// and throwaway topologies.
    public func delete(on connection: AMQPConnection) async throws {
        for (name, _) in queues { try await connection.deleteQueue(name) }
        try await connection.deleteExchange(events)
    }

    static let deadLetterExchange = "x-dead-letter-exchange"
    static let deadLetterRoutingKey = "x-dead-letter-routing-key"
}
