import APNSCore
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import HeraldWorker
import RabbitMQ
import Testing

/// A hostile producer's stream, against the real broker, database and the simulator: every valid job delivered
/// once, every hostile message parked once with a reason naming its rule, and the worker still running afterwards.
@Suite(.needsServices, .timeLimit(.minutes(5))) struct HostileInputTests {
    static let now = Int64(Date().timeIntervalSince1970)

    static func job(
        _ id: String, token: String, top: String = "", notification extra: String = "", aps: String = ""
    ) -> [UInt8] {
        Array(
            #"""
            {"id":"\#(id)","app":"\#(WorkerHarness.app)","target":{"tokens":["\#(token)"]}\#(top),
             "notification":{"aps":{"alert":"hi"\#(aps)},"custom":{"job":"\#(id)"}\#(extra)}}
            """#.utf8)
    }

    static func properties(_ id: String, timestamp: Int64? = nil) -> AMQPProperties {
        AMQPProperties(contentType: "application/json", messageID: id, timestamp: timestamp)
    }

    @Test func aMixedStreamOfHostileAndValidMessagesParksEachHostileOneOnceAndDeliversEveryValidJobOnce()
        async throws
    {
        try await WorkerHarness.with { harness in
            let devices = try await harness.importDevices(count: 60)
            func token(_ i: Int) -> String { devices[i].token.hex }

            // Valid small jobs published in one burst (so they are delivered in groups), with the AMQP timestamp
            // in seconds, milliseconds, microseconds (UnixMicro) and nanoseconds (UnixNano, time_ns()): a
            // nanosecond one used to trap the worker, a microsecond one to fail its group's write after the send.
            var valid: Set<String> = []
            for i in 0..<40 {
                let unit: Int64 = [1, 1000, 1_000_000, 1_000_000_000][i % 4]
                try await harness.publishRaw(
                    Self.job("valid-\(i)", token: token(i)),
                    properties: Self.properties("valid-\(i)", timestamp: Self.now * unit))
                valid.insert("valid-\(i)")
            }
            try await harness.publishRaw(
                Self.job("valid-max", token: token(40)), properties: Self.properties("valid-max", timestamp: .max))
            try await harness.publishRaw(
                Self.job("valid-min", token: token(41)), properties: Self.properties("valid-min", timestamp: .min))
            valid.formUnion(["valid-max", "valid-min"])

            // Hostile job messages, each with the rule its reason must name.
            let hostile: [(id: String, body: [UInt8], rule: String)] = [
                (
                    "h-throttle", Self.job("h-throttle", token: token(50), top: #","throttle_per_second":2147483648"#),
                    "throttle_per_second is out of range"
                ),
                (
                    "h-badge", Self.job("h-badge", token: token(51), notification: #","badge_increment":2147483648"#),
                    "badge_increment is out of range"
                ),
                (
                    "h-expiration", Self.job("h-expiration", token: token(52), notification: #","expiration":-1"#),
                    "expiration is out of range"
                ),
                (
                    "h-collapse", Self.job("h-collapse", token: token(53), notification: #","collapse_id":"a\r\nb""#),
                    "apns-collapse-id contains a control character"
                ),
                (
                    "h-huge-number", Self.job("h-huge-number", token: token(54), aps: #","x":1e400"#),
                    "a number is out of range"
                ),
                (
                    "h-tiny-number", Self.job("h-tiny-number", token: token(55), aps: #","x":1e-400"#),
                    "a number is out of range"
                ),
                ("h-nul", Self.job("h-nul", token: token(56), aps: #","sound":"a\u0000""#), "U+0000"),
                ("h-id", Self.job("h-id\\r\\nx", token: token(57)), "out_of_bounds: id contains a control character"),
                (
                    "h-locale",
                    Array(
                        #"{"app":"\#(WorkerHarness.app)","target":{"all":true,"locales":["%"]},"notification":{"aps":{"alert":"hi"}}}"#
                            .utf8),
                    "locales.0 is not a BCP 47 tag"
                ),
                (
                    "h-size",
                    Self.job(
                        "h-size", token: token(58), aps: #","pad":""# + String(repeating: "x", count: 2 << 20) + #"""#),
                    "over the 1048576-byte limit"
                ),
                ("h-json", Array("{".utf8), "not JSON (expected a string key"),
            ]
            for message in hostile {
                try await harness.publishRaw(message.body, properties: Self.properties(message.id, timestamp: Self.now))
            }
            // Batch messages come back from the retry queues: nothing in one is trusted either.
            let batches: [(body: String, rule: String)] = [
                (#"{"job":"valid-0","seq":0,"attempt":2,"tokens":["zz"]}"#, "tokens.0 is not a device token"),
                (#"{"job":"valid-0","seq":1099511627776,"attempt":2,"tokens":[]}"#, "seq is out of range"),
                (#"{"job":"valid-0","seq":0,"attempt":0,"tokens":[]}"#, "attempt is out of range"),
                (#"{"job":"valid-0","seq":0,"attempt":2}"#, "neither tokens nor a range"),
                ("[1,2]", "not a batch message"),
            ]
            for batch in batches {
                try await harness.publishRaw(Array(batch.body.utf8), to: harness.topology.batches)
            }

            let worker = try harness.startWorker()
            await harness.waitUntilFinished(valid, in: .done)
            let expectedParks = hostile.count + batches.count
            _ = await harness.events.wait { events in
                events.count { if case .parked = $0 { true } else { false } } >= expectedParks
            }
            // Still running: a job published now is delivered too.
            try await harness.publishRaw(Self.job("after", token: token(59)), properties: Self.properties("after"))
            await harness.waitUntilFinished(["after"], in: .done)
            try await worker.stop()

            for i in 0..<40 { #expect(harness.received(job: "valid-\(i)") == [token(i)]) }
            #expect(harness.received(job: "valid-max") == [token(40)])
            #expect(harness.received(job: "after") == [token(59)])
            // Each hostile message parked exactly once (no loop), with its rule, and nothing of it sent.
            let reasons = harness.parkedReasons
            #expect(reasons.count == expectedParks)
            for message in hostile {
                // Two messages (a huge and a tiny number) break the same rule.
                let breaking = hostile.count { $0.rule == message.rule }
                #expect(reasons.count { $0.contains(message.rule) } == breaking, "\(message.id): \(reasons)")
                #expect(harness.received(job: message.id).isEmpty)
            }
            for batch in batches {
                #expect(reasons.count { $0.contains(batch.rule) } == 1, "\(batch.body): \(reasons)")
            }
            // The nanosecond- and microsecond-stamped jobs' rows were written once, with their counts.
            #expect(try await harness.job("valid-2")?.counters == JobCounters(targeted: 1, sent: 1))
            #expect(try await harness.job("valid-3")?.counters == JobCounters(targeted: 1, sent: 1))
        }
    }
}
