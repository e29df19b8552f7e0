import Foundation
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ

/// Handles messages from `herald.jobs`: decodes and validates each, parks what can never succeed (with the reason in
/// a header), holds scheduled jobs, skips finished ids, and plans the rest. Acknowledges only after the outcome is
/// in PostgreSQL; every path ends in an ack, a park (then ack) or a requeue — never a crash.
struct JobConsumer: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    let planner: Planner
    let parking: Parking
    let metrics: WorkerMetrics
    let logger: Logger

    func handle(_ delivery: AMQPDelivery, consumer: AMQPConsumer) async {
        metrics.jobsReceived.increment()
        var logger = self.logger
        if let messageID = delivery.properties.messageID { logger[metadataKey: "message_id"] = "\(messageID.prefix(64))" }

        let job: PreparedJob
        do {
            job = try PreparedJob.decode(delivery.body) { UUID().uuidString.lowercased() }
        } catch {
            await park(delivery, jobID: nil, reason: error.description, consumer: consumer, logger: logger)
            return
        }
        logger[metadataKey: "job"] = "\(job.id)"
        guard configuration.apps.app(job.app) != nil else {
            let reason = "\(JobError.Code.unknownApp): app \(job.app.prefix(100)) is not in the apps file"
            try? await store.recordRejectedJob(id: job.id, app: String(job.app.prefix(200)), reason: reason)
            await park(delivery, jobID: job.id, reason: reason, consumer: consumer, logger: logger)
            return
        }

        do {
            let spec = String(decoding: try JSONEncoder().encode(job.spec), as: UTF8.self)
            let publishedAt = delivery.properties.timestamp.map { $0 * 1000 }
            let event: JobEvent?
            switch try await store.register(job, spec: spec, publishedAt: publishedAt) {
            case .scheduled:
                logger.info("job scheduled")
                event = .scheduled(id: job.id)
            case .duplicate(let state):
                logger.info("job already finished, not sent again", metadata: ["state": "\(state.rawValue)"])
                event = .duplicate(id: job.id, state: state)
            case .plan(let cursor, let nextSeq, let planned):
                let finished = try await planner.plan(job, cursor: cursor, nextSeq: nextSeq, planned: planned)
                if let finished {
                    metrics.jobFinished(state: finished.rawValue)
                    logger.info("job finished", metadata: ["state": "\(finished.rawValue)"])
                    event = .finished(id: job.id, state: finished)
                } else {
                    event = nil
                }
            }
            try await consumer.ack(delivery)
            if let event { configuration.onJobHandled?(event) }
        } catch {
            // The outcome could not be recorded (database or broker trouble): hand the message back so nothing is
            // lost; the job id makes its redelivery resume rather than repeat.
            logger.error("job could not be planned, requeueing", metadata: ["error": "\(error)"])
            try? await Task.sleep(for: .seconds(1))
            try? await consumer.nack(delivery, requeue: true)
        }
    }

    func park(_ delivery: AMQPDelivery, jobID: String?, reason: String, consumer: AMQPConsumer, logger: Logger) async {
        logger.warning("job parked", metadata: ["reason": "\(reason)"])
        metrics.jobsParked.increment()
        do {
            try await parking.park(
                delivery.body,
                properties: delivery.properties,
                reason: reason,
                attempts: 1,
                origin: configuration.topology.jobs
            )
            try await consumer.ack(delivery)
            configuration.onJobHandled?(.parked(id: jobID, reason: reason))
        } catch {
            logger.error("parking failed, requeueing", metadata: ["error": "\(error)"])
            try? await consumer.nack(delivery, requeue: true)
        }
    }
}

/// Handles messages from `herald.batches` (planned batches and retries coming back from the delay queues).
struct BatchConsumer: Sendable {
    let configuration: WorkerConfiguration
    let deliverer: BatchDeliverer
    let parking: Parking
    let metrics: WorkerMetrics
    let logger: Logger

    func handle(_ delivery: AMQPDelivery, consumer: AMQPConsumer) async {
        let batch: BatchMessage
        do {
            batch = try JSONDecoder().decode(BatchMessage.self, from: Data(delivery.body))
        } catch {
            await park(delivery, reason: "malformed: not a batch message", consumer: consumer)
            return
        }
        metrics.inFlightBatches.increment(by: 1)
        defer { metrics.inFlightBatches.decrement(by: 1) }
        do {
            let outcome = try await deliverer.deliver(batch)
            try await consumer.ack(delivery)
            switch outcome {
            case .completed(let finished):
                configuration.onJobHandled?(.batchCompleted(batch.key))
                if let finished { configuration.onJobHandled?(.finished(id: batch.job, state: finished)) }
            case .alreadyDone, .skipped:
                break
            case .unknownJob:
                logger.warning("batch of an unknown job dropped", metadata: ["batch": "\(batch.key)"])
            }
        } catch {
            logger.error("batch could not be completed, requeueing", metadata: ["batch": "\(batch.key)", "error": "\(error)"])
            try? await Task.sleep(for: .seconds(1))
            try? await consumer.nack(delivery, requeue: true)
        }
    }

    private func park(_ delivery: AMQPDelivery, reason: String, consumer: AMQPConsumer) async {
        do {
            try await parking.park(delivery.body, properties: delivery.properties, reason: reason, attempts: 1, origin: configuration.topology.batches)
            try await consumer.ack(delivery)
        } catch {
            try? await consumer.nack(delivery, requeue: true)
        }
    }
}
