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

    /// Where producers publish jobs: the queue, and the direct exchange of the same name bound to it with the queue's
    /// name as routing key. The API publishes through the exchange, so that its broker user may write to that one
    /// exchange and nothing else (not the default exchange, which reaches every queue); other producers may use
    /// either.
    public var jobs: String { prefix + ".jobs" }
    /// Where the planner publishes batches of large audiences.
    public var batches: String { prefix + ".batches" }
    /// Where messages that can never succeed go, with `x-herald-reason`.
    public var parked: String { prefix + ".parked" }
    /// The topic exchange of events (`job.finished.<app>`, `job.failed.<app>`, `token.pruned.<app>`, …), for the
    /// apps that have them; subscribers bind their own queues (schemas/events.schema.json).
    public var events: String { prefix + ".events" }

    /// Where events wait for the webhooks of their apps: bound to the events exchange (`*.*.<app>`) by a worker
    /// for each app with a webhook.
    public var webhooks: String { prefix + ".webhooks" }
    /// Events whose webhook failed every attempt, with `x-herald-reason`.
    public var webhooksParked: String { prefix + ".webhooks.parked" }

    /// The most messages the webhooks queue holds (`x-max-length`); past it the oldest are dropped (`drop-head`), so
    /// that a backlog can never fill the broker's disk or stall the events relay. Each is only a doorbell: the
    /// event stays in `webhook_events` until retention.
    public static let webhooksMaximumLength: Int64 = 1_000_000
    /// The most messages `herald.webhooks.parked` holds; past it the oldest parked events are dropped.
    public static let webhooksParkedMaximumLength: Int64 = 100_000

    /// The retry queue for the attempt after `attempt` (attempt 1 failed → the first delay).
    public func retryQueue(after attempt: Int) -> String {
        retryQueueName(retryDelays[retryIndex(after: attempt)])
    }

    /// The webhook retry queue for the attempt after `attempt`: the same delays, back to the webhooks queue.
    public func webhookRetryQueue(after attempt: Int) -> String {
        webhookRetryQueueName(retryDelays[retryIndex(after: attempt)])
    }

    /// The webhook delay queue an event waits in for about `wait` (as `delayQueue(for:)` chooses), back to the
    /// webhooks queue: where an event whose app has its requests in flight waits, no attempt counted.
    public func webhookDelayQueue(for wait: Duration) -> String {
        let sorted = retryDelays.sorted()
        return webhookRetryQueueName(sorted.last { $0 <= wait } ?? sorted[0])
    }

    private func retryIndex(after attempt: Int) -> Int { min(max(attempt - 1, 0), retryDelays.count - 1) }

    /// The delay queue a message waits in for about `wait`: the one with the longest delay that is not longer, else
    /// the shortest. A throttled batch whose turn is further off comes back, and is sent back, until it is near.
    public func delayQueue(for wait: Duration) -> String {
        let sorted = retryDelays.sorted()
        return retryQueueName(sorted.last { $0 <= wait } ?? sorted[0])
    }

    /// Every retry queue with its delay.
    public var retryQueues: [(name: String, delay: Duration)] { retryDelays.map { (retryQueueName($0), $0) } }

    func retryQueueName(_ delay: Duration) -> String { prefix + ".retry." + Self.label(delay) }

    func webhookRetryQueueName(_ delay: Duration) -> String { webhooks + ".retry." + Self.label(delay) }

    static func label(_ delay: Duration) -> String {
        let ms = milliseconds(delay)
        return ms % 60_000 == 0 ? "\(ms / 60_000)m" : ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
    }

    public static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The highest priority of a classic work queue (`x-max-priority`): four levels, so that notifications at
    /// apns-priority 10 are taken before those at 5 or 1 queued ahead of them, and within each the transactional
    /// lane before the bulk lane (`Job.brokerPriority`, whose 5 counts as 3 here). Quorum queues take no such
    /// argument: RabbitMQ 4 gives them two levels (5 high), earlier versions keep them in FIFO order.
    public static let maximumPriority: UInt8 = 3

    /// The arguments of a work queue.
    public var workQueueArguments: AMQPTable {
        switch queueType {
        case .classic: return [Self.maxPriority: .int(Int64(Self.maximumPriority))]
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
    public func retryQueueArguments(delay: Duration, to target: String? = nil) -> AMQPTable {
        var arguments: AMQPTable = [
            "x-message-ttl": .int(Self.milliseconds(delay)),
            "x-dead-letter-exchange": .string(""),
            "x-dead-letter-routing-key": .string(target ?? batches),
        ]
        if queueType == .quorum { arguments["x-queue-type"] = .string("quorum") }
        return arguments
    }

    /// The arguments of the parking queues and the webhooks queue: the queue type alone.
    public var parkedArguments: AMQPTable {
        queueType == .quorum ? ["x-queue-type": .string("quorum")] : [:]
    }

    /// The arguments of a bounded queue (the webhooks queue and its parking queue): the queue type, and at most
    /// `maximumLength` messages, the oldest dropped first.
    public func boundedArguments(maximumLength: Int64) -> AMQPTable {
        var arguments = parkedArguments
        arguments[Self.maxLength] = .int(maximumLength)
        arguments[Self.overflow] = .string("drop-head")
        return arguments
    }

    /// Every queue (all durable) with its arguments, in declaration order: the one definition that `declare(on:)`
    /// declares and `herald topology export` writes out.
    public var queues: [(name: String, arguments: AMQPTable)] {
        [(jobs, workQueueArguments), (batches, workQueueArguments)]
            + retryQueues.map { ($0.name, retryQueueArguments(delay: $0.delay)) }
            + [(parked, parkedArguments), (webhooks, boundedArguments(maximumLength: Self.webhooksMaximumLength))]
            + retryDelays.map { (webhookRetryQueueName($0), retryQueueArguments(delay: $0, to: webhooks)) }
            + [(webhooksParked, boundedArguments(maximumLength: Self.webhooksParkedMaximumLength))]
    }

    /// Declares the jobs exchange and queue and binds them: all a producer needs, and all the API's broker user may
    /// configure.
    public func declareJobs(on connection: AMQPConnection) async throws {
        try await connection.declareExchange(jobs, type: "direct")
        _ = try await declareQueue(jobs, arguments: workQueueArguments, on: connection)
        try await connection.bindQueue(jobs, to: jobs, routingKey: jobs)
    }

    /// Declares every queue, idempotently. Returns the work queues that were taken as they already were, without
    /// the arguments added since they were first declared.
    ///
    /// A work queue declared by an earlier Herald is refused with 406 (its arguments differ): a classic one from
    /// before priorities (`x-max-priority`), a quorum one from before it had a dead-letter target (issue 16). It is
    /// then taken as it is: a classic queue keeps FIFO order, and the worker still parks a quorum queue's message
    /// itself before the delivery limit (`maximumDeliveries`). docs/operations.md's upgrade notes say how to
    /// recreate such a queue, or add the dead-letter target by policy.
    @discardableResult
    public func declare(on connection: AMQPConnection) async throws -> [String] {
        try await connection.declareExchange(events, type: "topic")
        try await connection.declareExchange(jobs, type: "direct")
        var asTheyWere: [String] = []
        for (name, arguments) in queues where try await declareQueue(name, arguments: arguments, on: connection) {
            asTheyWere.append(name)
        }
        try await connection.bindQueue(jobs, to: jobs, routingKey: jobs)
        return asTheyWere
    }

    /// Declares one queue; returns true when it was declared by an earlier Herald, without the arguments added
    /// since, and is taken as it is (a work queue or a webhook queue refused with 406).
    private func declareQueue(
        _ name: String, arguments: AMQPTable, on connection: AMQPConnection
    ) async throws -> Bool {
        let refused: AMQPError
        do {
            _ = try await connection.declareQueue(name, durable: true, arguments: arguments)
            return false
        } catch {
            refused = error
        }
        var earlier = arguments
        for later in Self.laterArguments { earlier[later] = nil }
        guard refused.replyCode == 406, Self.upgradable(name, of: self), earlier != arguments else { throw refused }
        _ = try await connection.declareQueue(name, durable: true, arguments: earlier)
        return true
    }

    /// Deletes every queue and the events exchange, with what they hold: the mirror of `declare(on:)`, for tests
    /// and throwaway topologies.
    public func delete(on connection: AMQPConnection) async throws {
        for (name, _) in queues { try await connection.deleteQueue(name) }
        try await connection.deleteExchange(events)
        try await connection.deleteExchange(jobs)
    }

    static let maxPriority = "x-max-priority"
    static let deadLetterExchange = "x-dead-letter-exchange"
    static let deadLetterRoutingKey = "x-dead-letter-routing-key"
    static let maxLength = "x-max-length"
    static let overflow = "x-overflow"
    /// Arguments that queues declared by an earlier Herald lack: the work queues' priorities and dead-letter
    /// target, the webhook queues' bounds (which a policy can add to such a queue, docs/operations.md).
    static let laterArguments = [maxPriority, deadLetterExchange, deadLetterRoutingKey, maxLength, overflow]

    /// The queues an earlier Herald declared with fewer arguments, taken as they are.
    static func upgradable(_ name: String, of topology: Topology) -> Bool {
        [topology.jobs, topology.batches, topology.webhooks, topology.webhooksParked].contains(name)
    }
}
