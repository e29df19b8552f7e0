import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ
import ServiceLifecycle

/// Consumes `herald.jobs`: decodes each message, parks what can never succeed (with the reason in a header),
/// delivers the rest, and acks only after the outcome is written to PostgreSQL.
///
/// On graceful shutdown it stops taking new jobs, lets the jobs in hand finish, and returns.
public struct JobConsumer: Service {
    let configuration: WorkerConfiguration
    let store: Store
    let clients: APNSClients
    let logger: Logger
    let metrics = WorkerMetrics()

    public init(configuration: WorkerConfiguration, store: Store, clients: APNSClients, logger: Logger) {
        self.configuration = configuration
        self.store = store
        self.clients = clients
        self.logger = logger
    }

    public func run() async throws {
        let connection = try await AMQPConnection.connect(configuration.amqp, logger: logger)
        do {
            try await configuration.topology.declare(on: connection)
            let consumer = try await connection.consume(
                queue: configuration.topology.jobs,
                prefetch: configuration.prefetch
            )
            logger.info("consuming jobs", metadata: ["queue": "\(configuration.topology.jobs)"])
            let deliverer = Deliverer(
                store: store,
                clients: clients,
                apps: configuration.apps,
                configuration: configuration,
                metrics: metrics,
                logger: logger
            )
            try await withGracefulShutdownHandler {
                // Prefetch bounds how many deliveries the broker hands us, so this group is bounded too.
                try await withThrowingDiscardingTaskGroup { group in
                    for try await delivery in consumer {
                        group.addTask {
                            await handle(delivery, consumer: consumer, publisher: connection, deliverer: deliverer)
                        }
                    }
                }
            } onGracefulShutdown: {
                Task { try? await consumer.cancel() }
            }
            logger.info("job consumer stopped")
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
    }

    /// Handles one message. Never throws: every path ends in an ack, a park (then ack) or a requeue.
    func handle(
        _ delivery: AMQPDelivery,
        consumer: AMQPConsumer,
        publisher: AMQPConnection,
        deliverer: Deliverer
    ) async {
        metrics.jobsReceived.increment()
        var logger = self.logger
        if let messageID = delivery.properties.messageID { logger[metadataKey: "message_id"] = "\(messageID.prefix(64))" }

        let job: PreparedJob
        do {
            job = try PreparedJob.decode(delivery.body) { UUID().uuidString.lowercased() }
        } catch {
            await park(delivery, jobID: nil, reason: error.description, consumer: consumer, publisher: publisher, logger: logger)
            return
        }
        logger[metadataKey: "job"] = "\(job.id)"
        guard configuration.apps.app(job.app) != nil else {
            let reason = "\(JobError.Code.unknownApp): app \(job.app.prefix(100)) is not in the apps file"
            try? await store.recordRejectedJob(id: job.id, app: String(job.app.prefix(200)), reason: reason)
            await park(delivery, jobID: job.id, reason: reason, consumer: consumer, publisher: publisher, logger: logger)
            return
        }

        do {
            let result = try await deliverer.deliver(job)
            try await consumer.ack(delivery)
            switch result {
            case .finished(let state):
                metrics.jobFinished(state: state.rawValue)
                logger.info("job finished", metadata: ["state": "\(state.rawValue)"])
                configuration.onJobHandled?(.finished(id: job.id, state: state))
            case .alreadyFinished(let state):
                logger.info("job already finished, not sent again", metadata: ["state": "\(state.rawValue)"])
                configuration.onJobHandled?(.duplicate(id: job.id, state: state))
            }
        } catch {
            // The outcome could not be written (database or broker trouble): hand the job back so that it is not
            // lost; job ids make the redelivery idempotent for finished jobs.
            logger.error("job could not be completed, requeueing", metadata: ["error": "\(error)"])
            try? await Task.sleep(for: .seconds(1))
            try? await consumer.nack(delivery, requeue: true)
        }
    }

    /// Publishes the message to the parking queue with its reason, then acks the original.
    func park(
        _ delivery: AMQPDelivery,
        jobID: String?,
        reason: String,
        consumer: AMQPConsumer,
        publisher: AMQPConnection,
        logger: Logger
    ) async {
        logger.warning("job parked", metadata: ["reason": "\(reason)"])
        metrics.jobsParked.increment()
        var properties = delivery.properties
        properties.persistent = true
        properties.headers[ParkingHeader.reason] = .string(String(reason.prefix(1000)))
        properties.headers[ParkingHeader.originQueue] = .string(configuration.topology.jobs)
        let attempts: Int64 =
            if case .int(let n) = properties.headers[ParkingHeader.attempts] { n } else { 1 }
        properties.headers[ParkingHeader.attempts] = .int(attempts)
        do {
            try await publisher.publish(
                delivery.body,
                routingKey: configuration.topology.parked,
                properties: properties,
                mandatory: true
            )
            try await consumer.ack(delivery)
            configuration.onJobHandled?(.parked(id: jobID, reason: reason))
        } catch {
            logger.error("parking failed, requeueing", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
        }
    }
}
