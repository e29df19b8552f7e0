import Foundation
import HeraldCore
import RabbitMQ

/// What an operator does with `herald.parked` (`herald parked list|replay|purge`) and what the workers' retention
/// drops from it, over one pass through the queue.
///
/// A pass takes the ready messages one at a time with basic.get (`AMQPQueueReader`), unacknowledged, and holds
/// every one it does not settle until the pass ends; then the reader's channel closes and the broker puts them back
/// where they were. A held message is not delivered again, so a pass sees each message once and leaves the queue as
/// it was apart from what it settled. A message parked meanwhile (a replayed job parked again by a worker) may be
/// read by the same pass: a replay knows it by its identity (the job, or the body) as one it took, reports it as
/// repeated and leaves it for the next pass. Messages held by a pass are not ready to another one: two passes at
/// once each see part of the queue (the workers' retention runs one at a time).
package struct ParkedMessages: Sendable {
    /// The most messages one pass looks at (and holds unacknowledged).
    package static let scanLimit = 100_000

    package let connection: AMQPConnection
    package let topology: Topology
    /// The parking queue a pass goes through: `herald.parked`, or `herald.webhooks.parked` for retention.
    package let queue: String

    package init(connection: AMQPConnection, topology: Topology, queue: String? = nil) {
        self.connection = connection
        self.topology = topology
        self.queue = queue ?? topology.parked
    }

    /// What a pass did.
    package struct Pass: Sendable, Hashable {
        /// The matching messages it listed, replayed or dropped (at most the limit).
        package var taken: [ParkedMessage] = []
        /// Matching messages it left parked because their origin is not one of Herald's work queues.
        package var refused: [ParkedMessage] = []
        /// Matching messages a replay left parked because they were sent but not settled (replaying them sends
        /// their notifications again): replayed only when forced.
        package var unsettled: [ParkedMessage] = []
        /// Matching messages a replay left parked because the pass had taken the same message, or a message of the
        /// same job, already.
        package var repeated: [ParkedMessage] = []
        /// Messages looked at.
        package var scanned = 0
        /// True when the pass ended at `scanLimit` with messages still ready, or stopped at the limit: more may
        /// match.
        package var incomplete = false
    }

    /// The matching messages, up to `limit`, without removing any.
    package func list(_ filter: ParkedMessageFilter, limit: Int, now: Int64 = Self.now()) async throws -> Pass {
        try await pass(filter, limit: limit, now: now) { _, _ in .keep }
    }

    /// Drops the matching messages, up to `limit`.
    package func purge(_ filter: ParkedMessageFilter, limit: Int, now: Int64 = Self.now()) async throws -> Pass {
        try await pass(filter, limit: limit, now: now) { _, _ in .drop }
    }

    /// Publishes each matching message, up to `limit`, back to the queue it was parked from, without the parking
    /// headers (so its attempts start again), each with a broker confirm, and then drops the parked copy. A message
    /// whose origin is not Herald's jobs or batches queue, or with no body (over the size limit, dropped unread),
    /// stays parked and is reported as refused; so, unless `force`, does one parked as sent but not settled (its
    /// notifications went out), reported as unsettled. A pass takes each message, and each job message of one job,
    /// once: a copy of one it took stays parked.
    /// `prepare` runs before each publish (to forget the job's rejection, `replayParked` in HeraldWorker).
    package func replay(
        _ filter: ParkedMessageFilter, limit: Int, force: Bool = false, now: Int64 = Self.now(),
        prepare: @escaping (ParkedMessage) async throws -> Void = { _ in }
    ) async throws -> Pass {
        let topology = self.topology
        let workQueues = [topology.jobs, topology.batches]
        let connection = self.connection
        var taken = Set<Int>()
        return try await pass(filter, limit: limit, now: now) { delivery, message in
            guard let origin = message.originQueue, workQueues.contains(origin) else { return .refuse }
            // A message parked without its body (one over the size limit, dropped unread) has nothing to replay.
            guard !delivery.body.isEmpty else { return .refuse }
            if !force, message.reason?.hasPrefix(ParkedMessage.sentButNotSettled) == true { return .unsettled }
            let identity = Self.identity(of: delivery, message, origin: origin, isJob: origin == topology.jobs)
            guard taken.insert(identity).inserted else { return .repeated }
            try await prepare(message)
            try await connection.publish(
                delivery.body, routingKey: origin, properties: Self.replayed(delivery.properties), mandatory: true)
            return .drop
        }
    }

    /// Drops messages parked at least `maximumAge` ago (by `ParkedMessage.parkedAt`; a message whose parking time
    /// is unknown is kept), looking at up to `scanLimit` messages; returns how many it dropped.
    package func dropExpired(
        maximumAge: Duration, scanLimit: Int = 10_000, now: Int64 = Self.now()
    ) async throws -> Int {
        let filter = ParkedMessageFilter(olderThanSeconds: maximumAge.components.seconds)
        return try await pass(filter, limit: Int.max, scanLimit: scanLimit, now: now) { _, _ in .drop }.taken.count
    }

    /// What a replay pass takes once: a job message by its app and id, any other message by its origin and body.
    static func identity(of delivery: AMQPDelivery, _ message: ParkedMessage, origin: String, isJob: Bool) -> Int {
        var hasher = Hasher()
        hasher.combine(origin)
        if isJob, let app = message.app, let id = message.jobID {
            hasher.combine(app)
            hasher.combine(id)
        } else {
            hasher.combine(delivery.body)
        }
        return hasher.finalize()
    }

    /// The properties of a replayed copy: the original's, without the headers parking and dead-lettering added.
    static func replayed(_ properties: AMQPProperties) -> AMQPProperties {
        var properties = properties
        for header in properties.headers.keys
        where header.hasPrefix("x-herald-") || header == "x-death" || header.hasPrefix("x-first-death-")
            || header.hasPrefix("x-last-death-") || header == "x-delivery-count"
        {
            properties.headers[header] = nil
        }
        properties.persistent = true
        return properties
    }

    package static func now() -> Int64 { HeraldClock.system.unixSeconds }

    enum Action {
        case keep
        case drop
        case refuse
        case unsettled
        case repeated
    }

    /// One pass: `act` decides for each matching message, until `limit` were taken.
    private func pass(
        _ filter: ParkedMessageFilter,
        limit: Int,
        scanLimit: Int = Self.scanLimit,
        now: Int64,
        _ act: (AMQPDelivery, ParkedMessage) async throws -> Action
    ) async throws -> Pass {
        // No bound from the queue's count: read just after another pass's channel closed, it misses what the broker
        // is still putting back. What a replay parks again during its own pass has the identity of what it took
        // (`identity(of:)`), so the pass reads it as repeated and leaves it parked.
        let reader = try await connection.reader(of: queue)
        // Whatever happens, the channel closes and the broker requeues what was not settled, before this returns.
        do {
            let result = try await scan(
                reader, filter, limit: limit, scanLimit: scanLimit, now: now, act)
            await reader.close()
            return result
        } catch {
            await reader.close()
            throw error
        }
    }

    private func scan(
        _ reader: AMQPQueueReader,
        _ filter: ParkedMessageFilter,
        limit: Int,
        scanLimit: Int,
        now: Int64,
        _ act: (AMQPDelivery, ParkedMessage) async throws -> Action
    ) async throws -> Pass {
        var result = Pass()
        while result.taken.count < limit {
            guard result.scanned < scanLimit else {
                result.incomplete = true
                break
            }
            guard let delivery = try await reader.get() else { break }
            result.scanned += 1
            let message = ParkedMessage(delivery, now: now)
            guard filter.matches(message, now: now) else { continue }
            switch try await act(delivery, message) {
            case .keep:
                result.taken.append(message)
            case .drop:
                try await reader.ack(delivery)
                result.taken.append(message)
            case .refuse:
                result.refused.append(message)
            case .unsettled:
                result.unsettled.append(message)
            case .repeated:
                result.repeated.append(message)
            }
            if result.taken.count == limit { result.incomplete = true }
        }
        return result
    }
}
