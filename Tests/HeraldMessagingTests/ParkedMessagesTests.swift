import Foundation
import HeraldMessaging
import HeraldTestSupport
import Logging
import RabbitMQ
import Testing

/// Parked messages as operators and retention see them: what is read of their headers, the age rule, replay's
/// refusal of foreign queues.
@Suite(.needsServices, .timeLimit(.minutes(1))) struct ParkedMessagesTests {
    static let logger = Logger(label: "HeraldMessagingTests.ParkedMessages")
    static let day: Int64 = 86_400

    @Test func hostileHeadersAreBoundedAndCleanedAndTheBodyIsNeverKept() {
        let now = Int64(Date().timeIntervalSince1970)
        let body = Array(#"{"id":"job\u001b[31m-1","app":"com.example.news","target":{"tokens":["ab"]}}"#.utf8)
        let delivery = AMQPDelivery(
            body: body, deliveryTag: 1, routingKey: "herald.parked",
            properties: AMQPProperties(
                messageID: String(repeating: "m", count: 5000),
                headers: [
                    ParkingHeader.reason: .string("unknown_app:\u{1b}[2J" + String(repeating: "r", count: 5000)),
                    ParkingHeader.originQueue: .int(7),
                    ParkingHeader.attempts: .int(-3),
                    ParkingHeader.parkedAt: .int(now + 365 * Self.day),
                ],
                timestamp: now - 3 * Self.day))
        let message = ParkedMessage(delivery)
        #expect(message.reason?.hasPrefix("unknown_app:?[2J") == true)
        #expect(message.reason?.count == 1000)
        #expect(message.originQueue == nil)
        #expect(message.attempts == nil)
        // A parking time in the future is not plausible: the publication time is used.
        #expect(message.parkedAt == now - 3 * Self.day)
        #expect(message.messageID?.count == 200)
        #expect(message.jobID == "job?[31m-1")
        #expect(message.app == "com.example.news")
        #expect(message.bodySize == body.count)
        let encoded = String(decoding: try! JSONEncoder().encode(message), as: UTF8.self)
        #expect(!encoded.contains("tokens") && !encoded.contains("\"ab\""))
    }

    @Test func theBrokersDeadLetteringCountsAsParking() {
        let delivery = AMQPDelivery(
            body: Array(#"{"job":"j-9","app":"a","seq":0,"attempt":1,"tokens":["ab"]}"#.utf8), deliveryTag: 1,
            routingKey: "herald.parked",
            properties: AMQPProperties(headers: [
                "x-first-death-reason": "delivery_limit", "x-first-death-queue": "herald.batches",
                "x-death": [["time": .int(1_700_000_000), "reason": "delivery_limit"]],
            ]))
        let message = ParkedMessage(delivery)
        #expect(message.reason == "dead-lettered: delivery_limit")
        #expect(message.originQueue == "herald.batches")
        #expect(message.parkedAt == 1_700_000_000)
        #expect(message.jobID == "j-9")
    }

    @Test func retentionDropsWhatWasParkedLongerThanTheAgeAndKeepsWhatItCannotDate() async throws {
        try await withParked { connection, topology in
            let now = Int64(Date().timeIntervalSince1970)
            let messages: [(String, AMQPTable, Int64?)] = [
                ("due", [ParkingHeader.parkedAt: .int(now - 14 * Self.day - 60)], nil),
                ("not-yet", [ParkingHeader.parkedAt: .int(now - 14 * Self.day + 60)], nil),
                ("published-long-ago", [:], now - 30 * Self.day),
                ("undated", [:], nil),
                ("wrong-type", [ParkingHeader.parkedAt: .string("yesterday")], nil),
            ]
            for (id, headers, timestamp) in messages {
                try await connection.publish(
                    Array("{}".utf8), routingKey: topology.parked,
                    properties: AMQPProperties(messageID: id, headers: headers, timestamp: timestamp))
            }
            let parked = ParkedMessages(connection: connection, topology: topology)
            #expect(try await parked.dropExpired(maximumAge: .seconds(14 * Self.day)) == 2)
            let rest = try await parked.list(ParkedMessageFilter(), limit: 100)
            #expect(Set(rest.taken.compactMap(\.messageID)) == ["not-yet", "undated", "wrong-type"])
            #expect(rest.scanned == 3)
            // Nothing more is due; a second pass drops none.
            #expect(try await parked.dropExpired(maximumAge: .seconds(14 * Self.day)) == 0)
        }
    }

    /// `herald.webhooks.parked` is covered by retention too: a pass over it drops its expired events, and leaves
    /// `herald.parked` as it is.
    @Test func retentionReachesTheWebhooksParkingQueue() async throws {
        try await withParked { connection, topology in
            let now = Int64(Date().timeIntervalSince1970)
            for (id, queue) in [("event-1", topology.webhooksParked), ("job-1", topology.parked)] {
                try await connection.publish(
                    Array("{}".utf8), routingKey: queue,
                    properties: AMQPProperties(
                        messageID: id, headers: [ParkingHeader.parkedAt: .int(now - 15 * Self.day)]))
            }
            let webhooks = ParkedMessages(connection: connection, topology: topology, queue: topology.webhooksParked)
            #expect(try await webhooks.dropExpired(maximumAge: .seconds(14 * Self.day)) == 1)
            #expect(try await connection.queueMessageCount(topology.webhooksParked) == 0)
            #expect(try await connection.queueMessageCount(topology.parked) == 1)
        }
    }

    @Test func replayPublishesToHeraldsQueuesWithoutParkingHeadersAndRefusesOthers() async throws {
        try await withParked { connection, topology in
            let parking = Parking(publisher: connection, topology: topology)
            try await parking.park(
                Array(#"{"id":"j-1","app":"a"}"#.utf8), properties: AMQPProperties(messageID: "j-1", priority: 2),
                reason: "unknown_app: app a is not in the apps file", attempts: 3, origin: topology.jobs)
            try await parking.park(
                Array("x".utf8), properties: AMQPProperties(messageID: "foreign"),
                reason: "unknown_app: elsewhere", attempts: 1, origin: "amq.other")
            try await parking.park(
                Array("y".utf8), properties: AMQPProperties(messageID: "other-reason"),
                reason: "malformed: not a job", attempts: 1, origin: topology.jobs)

            let parked = ParkedMessages(connection: connection, topology: topology)
            let pass = try await parked.replay(ParkedMessageFilter(reason: "unknown_app"), limit: 10)
            #expect(pass.taken.map(\.messageID) == ["j-1"])
            #expect(pass.refused.map(\.messageID) == ["foreign"])

            let consumer = try await connection.consume(queue: topology.jobs, prefetch: 1)
            var iterator = consumer.makeAsyncIterator()
            let replayed = try #require(try await iterator.next())
            #expect(replayed.body == Array(#"{"id":"j-1","app":"a"}"#.utf8))
            #expect(replayed.properties.messageID == "j-1")
            #expect(replayed.properties.priority == 2)
            #expect(replayed.properties.headers.keys.allSatisfy { !$0.hasPrefix("x-herald-") })
            try await consumer.ack(replayed)
            try await consumer.cancel()

            // The foreign one and the other reason stay parked.
            let rest = try await parked.list(ParkedMessageFilter(), limit: 10)
            #expect(Set(rest.taken.compactMap(\.messageID)) == ["foreign", "other-reason"])
            #expect(try await parked.purge(ParkedMessageFilter(reason: "malformed"), limit: 10).taken.count == 1)
            #expect(try await parked.list(ParkedMessageFilter(), limit: 10).taken.map(\.messageID) == ["foreign"])
        }
    }

    /// A replayed job that a worker parks again (a batch sent but not written, say) must not be taken again by the
    /// same pass: it was sent again up to `--limit` times. Nor is a second parked copy of a job it took.
    @Test func aReplayPassTakesEachMessageAndJobOnceThoughItsCopiesAreParkedAgainMeanwhile() async throws {
        try await withParked { connection, topology in
            let parking = Parking(publisher: connection, topology: topology)
            let job = Array(#"{"id":"j-1","app":"a"}"#.utf8)
            let batch = Array(#"{"job":"j-2","app":"a","seq":0,"attempt":1,"tokens":["ab"]}"#.utf8)
            for (body, id, origin) in [
                (job, "j-1", topology.jobs), (job, "j-1-again", topology.jobs),
                (batch, "b-0", topology.batches),
            ] {
                try await parking.park(
                    body, properties: AMQPProperties(messageID: id), reason: "failed_repeatedly: query_failed",
                    attempts: 1, origin: origin)
            }
            let parked = ParkedMessages(connection: connection, topology: topology)
            // Each message replayed is parked again at once, as a worker that fails it again would.
            let pass = try await parked.replay(ParkedMessageFilter(), limit: 50) { message in
                let body = message.originQueue == topology.batches ? batch : job
                try await parking.park(
                    body, properties: AMQPProperties(messageID: message.messageID), reason: "failed_repeatedly: again",
                    attempts: 1, origin: message.originQueue ?? "")
            }
            #expect(pass.taken.compactMap(\.messageID) == ["j-1", "b-0"])
            // The second copy of j-1, and the copies of j-1 and b-0 parked again during the pass, which it may read.
            #expect(pass.repeated.compactMap(\.messageID).first == "j-1-again")
            #expect(Set(pass.repeated.compactMap(\.messageID)).isSubset(of: ["j-1-again", "j-1", "b-0"]))
            #expect(pass.scanned == 2 + pass.repeated.count)
            #expect(!pass.incomplete)
            // The copies parked during the pass, and the one it did not take, wait for the next pass.
            // A list pass sees what is ready when it starts: the broker may still be putting back the copy the
            // replay's channel left unsettled, so look until all three are ready (a few passes at most).
            var rest = try await parked.list(ParkedMessageFilter(), limit: 50)
            for _ in 0..<100 where rest.taken.count < 3 {
                rest = try await parked.list(ParkedMessageFilter(), limit: 50)
            }
            #expect(rest.taken.compactMap(\.messageID).sorted() == ["b-0", "j-1", "j-1-again"])
            #expect(
                Set(rest.taken.compactMap(\.reason)) == ["failed_repeatedly: query_failed", "failed_repeatedly: again"])
        }
    }

    @Test func replayLeavesAMessageSentButNotSettledParkedUnlessForced() async throws {
        try await withParked { connection, topology in
            let parking = Parking(publisher: connection, topology: topology)
            try await parking.park(
                Array(#"{"job":"j-3","app":"a","seq":0,"attempt":1,"tokens":["ab"]}"#.utf8),
                properties: AMQPProperties(messageID: "sent"),
                reason: ParkedMessage.sentButNotSettled + ": completing batches failed (ConnectionPoolError)",
                attempts: 1, origin: topology.batches)
            let parked = ParkedMessages(connection: connection, topology: topology)
            let refused = try await parked.replay(ParkedMessageFilter(), limit: 10)
            #expect(refused.taken.isEmpty)
            #expect(refused.unsettled.compactMap(\.messageID) == ["sent"])
            #expect(try await parked.list(ParkedMessageFilter(), limit: 10).taken.compactMap(\.messageID) == ["sent"])

            let forced = try await parked.replay(ParkedMessageFilter(), limit: 10, force: true)
            #expect(forced.taken.compactMap(\.messageID) == ["sent"])
            #expect(forced.unsettled.isEmpty)
            #expect(try await connection.queueMessageCount(topology.batches) == 1)
        }
    }

    /// A job published with a per-message TTL kept it when parked, and vanished from the parking queue.
    @Test func aParkedCopyDropsTheProducersExpiration() async throws {
        try await withParked { connection, topology in
            try await Parking(publisher: connection, topology: topology).park(
                Array(#"{"id":"j-4","app":"a"}"#.utf8), properties: AMQPProperties(messageID: "ttl", expiration: "1"),
                reason: "unknown_app: app a is not in the apps file", attempts: 1, origin: topology.jobs)
            let reader = try await connection.reader(of: topology.parked)
            let copy = try await reader.get()
            await reader.close()
            #expect(copy?.properties.messageID == "ttl")
            #expect(copy?.properties.expiration == nil)
        }
    }

    private func withParked(_ body: (AMQPConnection, Topology) async throws -> Void) async throws {
        let topology = Topology(prefix: TestServices.uniqueName("herald-test-parked"))
        let connection = try await AMQPConnection.connect(
            AMQPConfiguration(url: TestServices.amqpURL), logger: Self.logger)
        try await topology.declare(on: connection)
        do {
            try await body(connection, topology)
        } catch {
            try? await topology.delete(on: connection)
            await connection.close()
            throw error
        }
        try await topology.delete(on: connection)
        await connection.close()
    }
}
