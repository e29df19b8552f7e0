import APNSCore
import FCMCore
import Foundation
import HeraldCore
import HeraldStore
import RabbitMQ
import Testing

@testable import HeraldWorker

/// A seeded fuzzer over the worker's intake: tens of thousands of mutated job and batch messages, each with
/// mutated AMQP properties. None may crash the process; each is either read into a job whose every value is within
/// its bounds, or refused with a `JobError` that names a rule. The seed is fixed, so a failure reproduces.
@Suite struct IntakeFuzzTests {
    static let seeds: [String] = [
        #"{"id":"j1","app":"com.example.news","target":{"tokens":["ad853c203a9b0000","<AD85 3C20>"]},"notification":{"push_type":"alert","priority":10,"expiration":0,"collapse_id":"c","aps":{"alert":"hi","badge":1},"custom":{"k":1}}}"#,
        #"{"app":"a","target":{"all":true,"locales":["fr","zh_Hant"]},"notification":{"aps":{"alert":{"title":"t","body":"b"}},"localizations":{"fr":{"title":"x"}},"badge_increment":1}}"#,
        #"{"id":"u","app":"a","target":{"users":["u1","u2"]},"throttle_per_second":5,"send_at":"2026-01-01T00:00:00Z","notification":{"push_type":"background","priority":5,"aps":{"content-available":1}}}"#,
        #"{"id":"t","app":"a","target":{"topic":"news"},"notification":{"aps":{"alert":"x","sound":"default"},"custom":{"n":[1,2.5,-3e2,true,null,"s"]}}}"#,
    ]

    /// Fragments that have broken parsers and pipelines before: extreme numbers, control characters, escapes,
    /// structure, and the fields whose bounds matter.
    static let fragments: [String] = [
        "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400",
        "1e-400", "-0", "0.0000001", "1e308", "NaN", "Infinity", #""\u0000""#, #""\r\n""#, #""\ud800""#,
        #""\udc00\ud800""#, #""%_\\""#, "null", "true", "[]", "{}", "[[[[[[[[", "]]]]", #"""#, ",", ":", "\u{0}",
        "\u{85}", "\u{7f}", #""throttle_per_second":"#, #""badge_increment":"#, #""expiration":"#,
        #""collapse_id":"#, #""priority":"#, #""locales":"#, #""tokens":"#, #""id":"#, #""app":"#,
        #""localizations":"#, String(repeating: "a", count: 300), String(repeating: "[", count: 600),
    ]

    @Test func mutatedJobsNeverCrashAndAreEitherValidOrRefusedWithARule() throws {
        var random = SplitMix64(seed: 0x4845_5241_4C44)
        var configuration = WorkerConfiguration(
            amqp: try AMQPConfiguration(url: "amqp://u:p@127.0.0.1:1/%2f"),
            database: try .init(url: "postgres://u:p@127.0.0.1:1/d"), apps: AppsFile(apps: []), appsDirectory: "/")
        configuration.maximumMessageBytes = 64 * 1024
        let intake = Intake(configuration: configuration)
        var accepted = 0
        var refused: [JobError.Code: Int] = [:]
        var rules = Set<String>()
        for round in 0..<30_000 {
            var body = Array(Self.seeds[round % Self.seeds.count].utf8)
            for _ in 0..<(1 + Int(random.next() % 4)) { Self.mutate(&body, &random) }
            let headers: AMQPTable =
                random.next() % 2 == 0 ? [:] : ["x-delivery-count": .int(Int64(bitPattern: random.next()))]
            let properties = AMQPProperties(
                messageID: "m", headers: headers, timestamp: Int64(bitPattern: random.next()))
            let delivery = AMQPDelivery(body: body, deliveryTag: 1, routingKey: "jobs", properties: properties)
            if let published = Intake.publishedAt(properties) {
                #expect(PublishTimestamp.plausibleSeconds.contains(published / 1000))
            }
            do {
                let (job, _) = try intake.job(delivery)
                accepted += 1
                try Self.checkBounds(job)
            } catch let error as JobError {
                #expect(!error.message.isEmpty)
                refused[error.code, default: 0] += 1
                // The rule, without the offsets and sizes that vary.
                rules.insert(String(error.message.prefix { !$0.isNumber }))
            }
        }
        // The mutations reach both outcomes, and several rules. (About 540 are accepted since unknown fields, typos
        // among them, are refused and an alert must show something: 1,600 were before.)
        #expect(accepted > 300)
        #expect(refused.count >= 4, "\(refused)")
        #expect(rules.count >= 20, "\(rules)")
    }

    @Test func mutatedBatchesNeverCrashAndAreEitherValidOrRefusedWithARule() throws {
        var random = SplitMix64(seed: 0x4241_5443_48)
        let configuration = WorkerConfiguration(
            amqp: try AMQPConfiguration(url: "amqp://u:p@127.0.0.1:1/%2f"),
            database: try .init(url: "postgres://u:p@127.0.0.1:1/d"), apps: AppsFile(apps: []), appsDirectory: "/")
        let intake = Intake(configuration: configuration)
        let seeds = [
            #"{"job":"j","seq":0,"attempt":2,"tokens":["aabb","ccdd"]}"#,
            #"{"job":"j","seq":7,"attempt":1,"after":"aa","through":"ff"}"#,
        ]
        var accepted = 0
        for round in 0..<10_000 {
            var body = Array(seeds[round % seeds.count].utf8)
            for _ in 0..<(1 + Int(random.next() % 3)) { Self.mutate(&body, &random) }
            let delivery = AMQPDelivery(body: body, deliveryTag: 1, routingKey: "batches")
            do {
                let batch = try intake.batch(delivery)
                accepted += 1
                #expect((0...Int(Int32.max)).contains(batch.seq))
                #expect((1...BatchMessage.maximumAttempt).contains(batch.attempt))
                // A token is an APNs one (hex) or an Android one (an FCM registration token or installation id).
                for token in batch.tokens ?? [] {
                    #expect(
                        DeviceToken.isValidHex(token) || (try? FCMTarget(token: token)) != nil
                            || (try? FCMTarget(fid: token)) != nil)
                }
            } catch {
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted > 100)
    }

    /// What every accepted job must satisfy, whatever it was mutated from.
    static func checkBounds(_ job: PreparedJob) throws {
        #expect(job.id.unicodeScalars.count <= JobLimits.idCharacters && !JobLimits.hasControlCharacter(job.id))
        #expect(!job.app.isEmpty && !JobLimits.hasControlCharacter(job.app))
        if let rate = job.throttlePerSecond { #expect((1...Int(Int32.max)).contains(rate)) }
        if let increment = job.template.badgeIncrement { #expect(Int(Int32.min)...Int(Int32.max) ~= increment) }
        if let expiration = job.template.expiration { #expect(JobLimits.expiration.contains(expiration)) }
        if let collapseID = job.template.collapseID { #expect(APNSRequest.isHeaderText(collapseID)) }
        try job.template.request(to: DeviceToken(trustedHex: "aa"), bundleID: "b").validate()
        switch job.audience {
        case .tokens(let tokens): #expect(tokens.count <= PreparedJob.maximumListedRecipients)
        case .users(let users): #expect(users.count <= PreparedJob.maximumListedRecipients)
        case .topic(_, let locales), .all(let locales):
            #expect((locales ?? []).allSatisfy(JobLimits.isTag))
        case .activity(let id), .channel(let id):
            #expect(
                !id.isEmpty && id.unicodeScalars.count <= JobLimits.activityIDCharacters && job.liveActivity?.key != nil
            )
        }
        // What the worker stores as the spec is JSON PostgreSQL accepts: it encodes again without error, and reads
        // back as the same job (`jsonBytes`, what producers and the API write).
        let encoded = try job.spec.jsonBytes()
        #expect(try Job(json: PayloadValue(json: encoded)) == job.spec)
    }

    static func mutate(_ body: inout [UInt8], _ random: inout SplitMix64) {
        let position = body.isEmpty ? 0 : Int(random.next() % UInt64(body.count))
        switch random.next() % 6 {
        case 0 where !body.isEmpty:  // flip a byte
            body[position] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
        case 1:  // insert a fragment
            body.insert(contentsOf: Array(fragments[Int(random.next() % UInt64(fragments.count))].utf8), at: position)
        case 2 where !body.isEmpty:  // delete a run
            body.removeSubrange(position..<min(body.count, position + 1 + Int(random.next() % 8)))
        case 3:  // replace a number or string with a fragment
            let fragment = Array(fragments[Int(random.next() % UInt64(fragments.count))].utf8)
            let end = min(body.count, position + 1 + Int(random.next() % 12))
            body.replaceSubrange(position..<end, with: fragment)
        case 4 where !body.isEmpty:  // duplicate a run
            let end = min(body.count, position + 1 + Int(random.next() % 32))
            body.insert(contentsOf: Array(body[position..<end]), at: end)
        default:  // a random byte
            body.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
        }
    }
}

/// A small seeded generator (SplitMix64), so a run can be repeated exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
