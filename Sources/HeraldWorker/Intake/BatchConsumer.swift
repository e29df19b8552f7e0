import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import RabbitMQ

/// Handles messages from `herald.batches` (planned batches and retries coming back from the delay queues).
struct BatchConsumer: Sendable {
    let configuration: WorkerConfiguration
    let store: Store
    /// Where a throttled batch whose turn is further off goes back to wait (a delay queue).
    let publisher: AMQPConnection
    let run: DeliveryRun
    let parking: Parking
    let metrics: WorkerMetrics
    let logger: Logger

    var outages: OutageWaiter {
        OutageWaiter(store: store, logger: logger, onEvent: configuration.onJobHandled, clock: configuration.clock)
    }

    func handle(_ delivery: AMQPDelivery, consumer: AMQPConsumer) async {
        var batch: BatchMessage
        do {
            batch = try Intake(configuration: configuration).batch(delivery)
        } catch {
            await park(delivery, reason: error.description, consumer: consumer)
            return
        }
        metrics.inFlightBatches.increment(by: 1)
        defer { metrics.inFlightBatches.decrement(by: 1) }
        let outcome: DeliveryOutcome
        do {
            // Held through a database outage until it is delivered; a failure after the send is not retried here
            // (`SentButNotSettled`): the delivery run already held its writes as long as it could.
            outcome = try await outages.untilDone("delivering a batch") {
                if batch.app == nil {
                    // Published before job ids were scoped by app (schemas/007): its job is the only one with its id.
                    batch.app = try await store.onlyApp(ofJob: batch.job)
                }
                guard batch.app != nil else { return .unknownJob }
                return try await run.deliver(batch)
            }
        } catch {
            if FailureKind.handBack(error) {
                logger.notice("shutting down, handing the batch back", metadata: ["batch": "\(batch.key)"])
                try? await consumer.nack(delivery, requeue: true)
                return
            }
            logger.error("batch could not be completed", metadata: ["batch": "\(batch.key)", "error": "\(error)"])
            let reason = FailureKind(error) == .permanent ? "\(error)" : "\(JobError.Code.failedRepeatedly): \(error)"
            await park(delivery, reason: reason, consumer: consumer)
            if error is SentButNotSettled { await fail(batch, reason: reason) }
            return
        }
        if case .deferred(let wait) = outcome {
            // Back to a delay queue (which returns it to the batches queue), confirmed before the ack: a copy that
            // is lost in between comes back as this message.
            do {
                let queue = configuration.topology.delayQueue(for: wait)
                try await outages.untilDone("deferring a throttled batch") {
                    try await publisher.publish(
                        delivery.body, routingKey: queue, properties: delivery.properties, mandatory: true)
                }
            } catch {
                logger.notice(
                    "a throttled batch could not be deferred, handing it back", metadata: ["error": "\(error)"])
                try? await consumer.nack(delivery, requeue: true)
                return
            }
        }
        guard (try? await consumer.ack(delivery)) != nil else { return }
        switch outcome {
        case .completed(let finished):
            configuration.onJobHandled?(.batchCompleted(batch.key))
            if let finished {
                configuration.onJobHandled?(.finished(app: batch.key.app, id: batch.job, state: finished))
            }
        case .alreadyDone, .skipped:
            break
        case .unknownJob:
            logger.warning("batch of an unknown job dropped", metadata: ["batch": "\(batch.key)"])
        case .deferred:
            configuration.onJobHandled?(.batchDeferred(batch.key))
        }
    }

    /// Fails the job of a batch that was sent but whose outcome could not be written (it was parked): nothing will
    /// complete that batch (replaying it would send it again), so the job must not stay `running` for ever waiting
    /// for it. Its error names the batch and the reason. As the small-job paths do (`JobConsumer.fail`).
    private func fail(_ batch: BatchMessage, reason: String) async {
        let key = batch.key
        let stopped = try? await outages.untilDone("failing a job") {
            try await store.failJob(
                key.jobKey, reason: "batch \(key.seq) (attempt \(key.attempt)): \(reason)")
        }
        if stopped == true {
            configuration.onJobHandled?(.finished(app: key.app, id: key.job, state: .failed))
        }
    }

    private func park(_ delivery: AMQPDelivery, reason: String, consumer: AMQPConsumer) async {
        logger.warning("batch parked", metadata: ["reason": "\(reason)"])
        do {
            try await outages.untilDone("parking a batch") {
                try await parking.park(
                    delivery.body, properties: delivery.properties, reason: reason, attempts: 1,
                    origin: configuration.topology.batches)
            }
            try await consumer.ack(delivery)
            configuration.onJobHandled?(.parked(id: nil, reason: reason))
        } catch {
            try? await consumer.nack(delivery, requeue: true)
        }
    }
}
