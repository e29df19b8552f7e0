import Foundation
import HeraldCore
import RabbitMQ
import Testing

@testable import HeraldWorker

/// The mailbox that coalesces a Live Activity's updates in a worker's hands (`LiveActivityMailbox`).
@Suite struct LiveActivityMailboxTests {
    static let key = ActivityKey(app: "a", key: .activity("order-1"))

    /// An update of order-1 with job id `id` and `aps.timestamp` `timestamp`.
    static func update(_ id: String, timestamp: Int64) throws -> RoutedJob {
        let job = Job(
            id: id, app: "a", target: .activity("order-1"),
            notification: JobNotification(
                pushType: "liveactivity",
                aps: ["event": "update", "content-state": .object([:]), "timestamp": .integer(timestamp)]))
        let prepared = try PreparedJob.prepare(job) { id }
        return RoutedJob(
            delivery: AMQPDelivery(body: [], deliveryTag: 1, routingKey: "herald.jobs"), job: prepared, spec: "{}",
            route: .liveActivity, publishedAt: nil)
    }

    static func ids(_ offer: LiveActivityMailbox.Offer) -> String {
        switch offer {
        case .run(let item): "run \(item.job.id)"
        case .queued: "queued"
        case .superseded(let older, let newer): "\(older.job.id) superseded by \(newer.job.id)"
        case .copy(let item): "copy of \(item.job.id)"
        }
    }

    @Test func theNewestWaitsOlderOnesAndCopiesChangeNothing() throws {
        let mailbox = LiveActivityMailbox()
        #expect(Self.ids(mailbox.offer(try Self.update("u1", timestamp: 100), key: Self.key)) == "run u1")
        // A redelivered copy of the job in hand, then one of the job that waits: acknowledged, nothing cancelled.
        #expect(Self.ids(mailbox.offer(try Self.update("u1", timestamp: 100), key: Self.key)) == "copy of u1")
        #expect(Self.ids(mailbox.offer(try Self.update("u2", timestamp: 200), key: Self.key)) == "queued")
        #expect(Self.ids(mailbox.offer(try Self.update("u2", timestamp: 200), key: Self.key)) == "copy of u2")
        // A newer one replaces the one that waits; an older one that comes late is the one superseded.
        #expect(Self.ids(mailbox.offer(try Self.update("u3", timestamp: 300), key: Self.key)) == "u2 superseded by u3")
        #expect(Self.ids(mailbox.offer(try Self.update("u0", timestamp: 50), key: Self.key)) == "u0 superseded by u3")
        // Equal times: the later arrival wins.
        #expect(Self.ids(mailbox.offer(try Self.update("u4", timestamp: 300), key: Self.key)) == "u3 superseded by u4")
        // Another activity is independent.
        let other = ActivityKey(app: "a", key: .activity("order-2"))
        #expect(Self.ids(mailbox.offer(try Self.update("o1", timestamp: 1), key: other)) == "run o1")
        #expect(mailbox.finished(Self.key)?.job.id == "u4")
        #expect(Self.ids(mailbox.offer(try Self.update("u4", timestamp: 300), key: Self.key)) == "copy of u4")
        #expect(mailbox.finished(Self.key) == nil)
        #expect(Self.ids(mailbox.offer(try Self.update("u5", timestamp: 400), key: Self.key)) == "run u5")
    }

    @Test func aTimestampFarAheadIsRefusedAtIntake() throws {
        let ahead = Int64(Date().timeIntervalSince1970) + LiveActivityJob.maximumTimestampLead + 60
        let error = try #require(throws: JobError.self) { try Self.update("future", timestamp: ahead) }
        #expect(error.message.contains("more than an hour ahead"))
        _ = try Self.update("soon", timestamp: Int64(Date().timeIntervalSince1970) + 60)
    }
}
