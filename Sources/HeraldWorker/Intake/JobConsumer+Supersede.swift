import HeraldCore
import Logging
import RabbitMQ

extension JobConsumer {
    /// Ends a job that a newer event of its activity replaced while it waited: `cancelled`, with the newer job named,
    /// then acknowledged. A job that is already final is left as it is.
    func supersede(_ older: RoutedJob, by newer: RoutedJob, consumer: AMQPConsumer, logger: Logger)
        async
    {
        let job = older.job
        let ended: Bool
        do {
            // A job another worker has started (this message a copy of it) is left to that worker.
            ended = try await outages.untilDone("cancelling a superseded job") {
                try await store.endUnsentJob(
                    job.key, state: .cancelled, targetKind: job.audience.kind,
                    reason: "superseded: job \(newer.job.id) carries a newer event of "
                        + (job.liveActivity?.key?.description ?? "the activity"),
                    unstartedOnly: true)
            }
        } catch {
            await fail(older.delivery, job: job, error: error, consumer: consumer, logger: logger)
            return
        }
        LiveActivityStage.count(job.liveActivity?.event ?? .update, priority: nil, why: "superseded")
        logger.info("Live Activity event superseded while it waited", metadata: ["newer_job": "\(newer.job.id)"])
        guard (try? await consumer.ack(older.delivery)) != nil, ended else { return }
        configuration.onJobHandled?(.finished(app: job.app, id: job.id, state: .cancelled))
    }
}
