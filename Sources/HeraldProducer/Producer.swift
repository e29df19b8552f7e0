import APNSCore
import Foundation
import HeraldCore
import HeraldMessaging
import Logging
import RabbitMQ
import Synchronization

/// Where and how a `Producer` publishes.
public struct ProducerConfiguration: Sendable {
    /// The broker.
    public var amqp: AMQPConfiguration
    /// The jobs queue (routing key on the default exchange): `herald.jobs`, or `<prefix>.jobs`, as `Topology` names
    /// it for the workers.
    public var queue: String = Topology().jobs
    /// The exchange jobs are published to, with `queue` as routing key: the default exchange (`""`) unless set.
    /// The API publishes through the jobs exchange (`Topology.jobs`, bound to the queue), the only one its broker
    /// user may write to.
    public var exchange: String = ""
    /// Run on every new connection before the first publish, e.g. to declare the topology.
    public var prepareConnection: (@Sendable (AMQPConnection) async throws -> Void)? = nil
    /// Time: the messages' timestamps and the wait of `answers(within:)`.
    public var clock: HeraldClock = .system

    public init(amqp: AMQPConfiguration, queue: String = Topology().jobs) {
        self.amqp = amqp
        self.queue = queue
    }
}

/// A job that the broker has confirmed.
public struct PublishedJob: Sendable, Hashable {
    /// The job id: the producer's, or one assigned here. Publishing again with it sends nothing twice.
    public var id: String
    /// Entries of `target.tokens` that are not device tokens (each fails alone at the worker).
    public var invalidTokenCount: Int
}

/// Publishes Herald jobs to RabbitMQ with publisher confirms, validating each job first.
///
/// ```swift
/// let producer = Producer(configuration: .init(amqp: try AMQPConfiguration(url: "amqp://…")), logger: logger)
/// let job = try await producer.publish(.alert(title: "Goal!", body: "2–1"), app: "com.example.news", to: .topic("sports"))
/// await producer.close()
/// ```
///
/// The connection opens on the first publish and is opened again after it is lost. Publishes may run concurrently:
/// they are pipelined on one connection and each returns once the broker has confirmed its message.
public actor Producer {
    private let configuration: ProducerConfiguration
    private let logger: Logger
    private var connection: AMQPConnection?
    private var connecting: Task<AMQPConnection, any Error>?
    private var isClosed = false

    public init(configuration: ProducerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Validates the typed notification, then publishes it as a job for `app` and `target`.
    ///
    /// - Parameters:
    ///   - id: the idempotency key; one is generated if nil.
    ///   - sendAt: when to send; nil means now.
    @discardableResult
    public func publish(
        _ notification: PushNotification,
        app: String,
        to target: Target,
        id: String? = nil,
        sendAt: Date? = nil,
        throttlePerSecond: Int? = nil
    ) async throws(ProducerError) -> PublishedJob {
        let job = Job(
            id: id,
            app: app,
            target: target,
            notification: try notification.jobNotification(),
            sendAt: sendAt.map { RFC3339.format(milliseconds: Int64($0.timeIntervalSince1970 * 1000)) },
            throttlePerSecond: throttlePerSecond
        )
        return try await publish(job)
    }

    /// Validates a job (as the worker will: payload size per push type, collapse id, priority rules, target) and
    /// publishes it.
    @discardableResult
    public func publish(_ job: Job) async throws(ProducerError) -> PublishedJob {
        let prepared: PreparedJob
        do {
            prepared = try PreparedJob.prepare(job) { UUID().uuidString.lowercased() }
        } catch {
            throw ProducerError(.invalidJob, error.description, underlying: error)
        }
        try await publish(prepared)
        return PublishedJob(id: prepared.id, invalidTokenCount: prepared.invalidTokenCount)
    }

    /// Publishes a job that is already validated, waiting for the broker's confirm.
    public func publish(_ prepared: PreparedJob) async throws(ProducerError) {
        let body: [UInt8]
        do {
            body = try prepared.spec.jsonBytes()
        } catch {
            throw ProducerError(.invalidJob, "the job cannot be encoded as JSON", underlying: error)
        }
        let properties = AMQPProperties(
            contentType: "application/json",
            messageID: prepared.id,
            persistent: true,
            timestamp: configuration.clock.unixSeconds,
            priority: prepared.brokerPriority(bulk: false)
        )
        // One retry on a fresh connection if the old one was lost: the job id makes a duplicate harmless.
        for attempt in 1...2 {
            do {
                let connection = try await currentConnection()
                try await connection.publish(
                    body, exchange: configuration.exchange, routingKey: configuration.queue, properties: properties,
                    mandatory: true)
                return
            } catch let error as AMQPError {
                let lost = error.code == .connectionClosed || error.code == .closed || error.code == .connectionFailed
                if lost { await dropConnection() }
                if !lost || attempt == 2 || isClosed {
                    throw ProducerError(.publishFailed, "publishing the job failed: \(error)", underlying: error)
                }
                logger.warning("broker connection lost, publishing again on a new one", metadata: ["error": "\(error)"])
            } catch let error as ProducerError {
                throw error
            } catch {
                throw ProducerError(.publishFailed, "publishing the job failed: \(error)", underlying: error)
            }
        }
    }

    /// Whether the producer holds an open connection (for readiness checks); does not connect.
    public var isConnected: Bool { connection != nil }

    /// Whether the broker answers (for readiness checks): the open connection's state, or else a connection
    /// attempt that may take at most `timeout` (it goes on in the background, and a publish then uses it).
    public func answers(within timeout: Duration) async -> Bool {
        if let connection { return connection.isConnected }
        if isClosed { return false }
        let attempt = Task { (try? await self.connect()) != nil }
        let answered = FirstAnswer()
        return await withCheckedContinuation { continuation in
            @Sendable func answer(_ value: Bool) {
                if answered.isFirst() { continuation.resume(returning: value) }
            }
            Task { answer(await attempt.value) }
            let clock = configuration.clock
            Task {
                try? await clock.sleep(timeout)
                answer(false)
            }
        }
    }

    /// Connects now rather than on the first publish (start-up checks).
    public func connect() async throws(ProducerError) {
        do {
            _ = try await currentConnection()
        } catch let error as ProducerError {
            throw error
        } catch {
            throw ProducerError(.publishFailed, "connecting to the broker failed: \(error)", underlying: error)
        }
    }

    /// Closes the connection; later publishes fail.
    public func close() async {
        isClosed = true
        connecting?.cancel()
        let open = connection
        connection = nil
        await open?.close()
    }

    private func currentConnection() async throws -> AMQPConnection {
        if isClosed { throw ProducerError(.publishFailed, "the producer is closed") }
        if let connection { return connection }
        if let connecting { return try await connecting.value }
        let configuration = self.configuration
        let logger = self.logger
        let task = Task<AMQPConnection, any Error> {
            let connection = try await AMQPConnection.connect(configuration.amqp, logger: logger)
            do {
                try await configuration.prepareConnection?(connection)
            } catch {
                await connection.close()
                throw error
            }
            return connection
        }
        connecting = task
        defer { connecting = nil }
        let connection = try await task.value
        if isClosed {
            await connection.close()
            throw ProducerError(.publishFailed, "the producer is closed")
        }
        self.connection = connection
        return connection
    }

    private func dropConnection() async {
        let old = connection
        connection = nil
        await old?.close()
    }
}

/// True for the first caller only: the first of two racing answers wins.
private final class FirstAnswer: Sendable {
    private let taken = Atomic(false)

    func isFirst() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}
