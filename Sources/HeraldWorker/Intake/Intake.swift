import Foundation
import HeraldCore
import RabbitMQ

/// The first step for every message, job or batch: the message read into a bounded, validated value, or the
/// reason (naming the rule) it is parked with. Nothing from the message reaches arithmetic, a header or a SQL
/// column before it passed here.
struct Intake: Sendable {
    /// The largest message body read at all: the consumers drop a larger one unread, by its content header
    /// (`AMQPDelivery.bodySize`).
    var maximumMessageBytes: Int
    /// Deliveries of one message (the broker's count, on quorum queues) after which it is parked rather than
    /// handled again: each of them ended without the message being settled (the worker died or was stopped).
    var maximumDeliveries: Int

    init(configuration: WorkerConfiguration) {
        maximumMessageBytes = configuration.maximumMessageBytes
        maximumDeliveries = configuration.maximumDeliveries
    }

    /// Why a message is parked before its body is read, if it is: too large, or delivered too often.
    func refusal(of delivery: AMQPDelivery) -> JobError? {
        if delivery.bodySize > maximumMessageBytes || delivery.body.count > maximumMessageBytes {
            let size = max(delivery.bodySize, delivery.body.count)
            let unread = delivery.body.count < size ? " (its body was dropped unread and is not kept)" : ""
            return JobError(
                .tooLarge, "the message is \(size) bytes, over the \(maximumMessageBytes)-byte limit\(unread)")
        }
        if let count = Self.deliveryCount(delivery.properties), count >= maximumDeliveries {
            return JobError(
                .redelivered,
                "delivered \(count + 1) times, each ending without the message settled (the worker stopped or died)")
        }
        return nil
    }

    /// The broker's count of earlier deliveries (`x-delivery-count`, set by quorum queues), if any.
    static func deliveryCount(_ properties: AMQPProperties) -> Int? {
        guard case .int(let count)? = properties.headers["x-delivery-count"] else { return nil }
        return Int(clamping: count)
    }

    /// When the producer published the message (ms since 1970), if its `timestamp` property is plausible.
    static func publishedAt(_ properties: AMQPProperties) -> Int64? {
        PublishTimestamp.milliseconds(fromSeconds: properties.timestamp)
    }

    /// A job message: decoded, validated, with an id (a new one if the producer gave none). Returns the job, and
    /// whether the id was the producer's.
    func job(_ delivery: AMQPDelivery) throws(JobError) -> (job: PreparedJob, idGiven: Bool) {
        if let refusal = refusal(of: delivery) { throw refusal }
        var idGiven = true
        let job = try PreparedJob.decode(delivery.body) {
            idGiven = false
            return UUID().uuidString.lowercased()
        }
        return (job, idGiven)
    }

    /// A batch message: decoded and validated.
    func batch(_ delivery: AMQPDelivery) throws(JobError) -> BatchMessage {
        if let refusal = refusal(of: delivery) { throw refusal }
        let batch: BatchMessage
        do {
            batch = try JSONDecoder().decode(BatchMessage.self, from: Data(delivery.body))
        } catch {
            throw JobError(.malformed, "not a batch message")
        }
        try batch.validate()
        return batch
    }
}
