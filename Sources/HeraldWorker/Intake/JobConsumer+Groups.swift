import RabbitMQ

extension JobConsumer {
    /// Delivers a group of small jobs through `GroupCommit`, acknowledging and failing on `consumer`.
    func deliver(_ group: [RoutedJob], consumer: AMQPConsumer) async {
        await groupCommit(consumer: consumer).deliver(group)
    }

    func groupCommit(consumer: AMQPConsumer) -> GroupCommit {
        GroupCommit(
            store: store,
            outages: outages,
            logger: logger,
            send: { [run] in try await run.sendGroup($0) },
            finish: { [run] in try await run.finishGroup($0) },
            acknowledge: { try? await consumer.ack($0) },
            fail: { item, error in
                await fail(item.delivery, job: item.job, error: error, consumer: consumer, logger: logger)
            },
            oneByOne: { item in
                var logger = self.logger
                logger[metadataKey: "job"] = "\(item.job.id)"
                await process(item, consumer: consumer, logger: logger)
            },
            onJobHandled: configuration.onJobHandled
        )
    }
}
