import APNSCore
import HeraldCore
import Testing

/// The bounds every job is held to before anything else happens, one rule per case: each value that used to reach
/// arithmetic, a header or a SQL column unchecked is now refused with a reason naming the field.
@Suite struct JobLimitsTests {
    static func decode(_ json: String) throws(JobError) -> PreparedJob {
        try PreparedJob.decode(Array(json.utf8)) { "generated-id" }
    }

    static func job(top: String = "", notification: String = "", aps: String = "", target: String? = nil) -> String {
        #"""
        {"app":"a","target":\#(target ?? #"{"tokens":["aabb"]}"#)\#(top),
         "notification":{"aps":{"alert":"hi"\#(aps)}\#(notification)}}
        """#
    }

    @Test(arguments: [
        (job(top: #","throttle_per_second":2147483648"#), "throttle_per_second is out of range"),
        (job(top: #","throttle_per_second":0"#), "throttle_per_second is out of range"),
        (job(notification: #","badge_increment":2147483648"#), "badge_increment is out of range"),
        (job(notification: #","badge_increment":-2147483649"#), "badge_increment is out of range"),
        (job(notification: #","expiration":-1"#), "expiration is out of range"),
        (job(notification: #","expiration":253402300800"#), "expiration is out of range"),
        (job(notification: #","collapse_id":"a\r\nb""#), "apns-collapse-id contains a control character"),
        (job(notification: #","collapse_id":"a\u0007""#), "apns-collapse-id contains a control character"),
        (job(aps: #","x":1e400"#), "a number is out of range"),
        (job(aps: #","x":-1e-400"#), "a number is out of range"),
        (job(top: #","id":"a\nb""#), "id contains a control character"),
        (job(top: #","id":"a\u0085b""#), "id contains a control character"),
        (job(top: ##","id":"""##), "id is empty"),
        (#"{"app":"a\tb","target":{"all":true},"notification":{"aps":{}}}"#, "app contains a control character"),
        (job(target: #"{"all":true,"locales":["fr%"]}"#), "target.locales.0 is not a BCP 47 tag"),
        (job(target: #"{"all":true,"locales":["_"]}"#), "target.locales.0 is not a BCP 47 tag"),
        (job(target: #"{"topic":"a\r\n"}"#), "target.topic contains a control character"),
        (job(target: #"{"users":["u","\u0001"]}"#), "target.users.1 contains a control character"),
        (
            job(target: #"{"topic":"\#(String(repeating: "t", count: 257))"}"#),
            "target.topic is 257 characters, over 256"
        ),
    ])
    func refusesWithTheRule(json: String, rule: String) {
        #expect {
            _ = try Self.decode(json)
        } throws: { error in
            (error as? JobError)?.description.contains(rule) == true
        }
    }

    @Test func acceptsTheBoundaries() throws {
        let job = try Self.decode(
            Self.job(
                top: #","throttle_per_second":2147483647,"id":"\#(String(repeating: "i", count: 128))""#,
                notification: #","badge_increment":-2147483648,"expiration":253402300799,"collapse_id":"ok id""#,
                aps: #","x":1e-300,"y":1e300"#))
        #expect(job.throttlePerSecond == 2_147_483_647)
        #expect(job.template.badgeIncrement == -2_147_483_648)
        #expect(
            try Self.decode(Self.job(target: #"{"all":true,"locales":["zh_Hant-TW","fr"]}"#)).audience
                == .all(locales: ["zh_Hant-TW", "fr"]))
    }

    @Test func tooManyLocalesOrLocalizationsAreRefused() {
        let locales = (0...JobLimits.locales).map { #""l\#($0 % 26)""# }.joined(separator: ",")
        #expect(throws: JobError.self) { try Self.decode(Self.job(target: #"{"all":true,"locales":[\#(locales)]}"#)) }
        let localizations = (0...JobLimits.localizations).map { #""t\#($0)":"x""# }.joined(separator: ",")
        #expect(throws: JobError.self) {
            try Self.decode(Self.job(notification: #","localizations":{\#(localizations)}"#))
        }
    }

    @Test(arguments: [
        (Int64(1_763_700_000), Int64(1_763_700_000_000)),  // seconds, as AMQP says
        (Int64(1_763_700_000_000), nil),  // milliseconds
        (Int64(1_763_700_000_000_000), nil),  // microseconds (Go's UnixMicro)
        (Int64(1_763_700_000_000_000_000), nil),  // nanoseconds (Go's UnixNano, Python's time_ns())
        (Int64.max, nil), (Int64.min, nil), (Int64(0), nil), (Int64(-1), nil),
    ])
    func aPublishTimestampIsTrustedOnlyWhenPlausible(seconds: Int64, milliseconds: Int64?) {
        #expect(PublishTimestamp.milliseconds(fromSeconds: seconds) == milliseconds)
    }

    @Test(arguments: [
        (BatchMessage(app: "a", job: "j", seq: 0, attempt: 1, tokens: ["aabb"]), nil),
        (BatchMessage(app: "a", job: "j", seq: 0, attempt: 1, after: nil, through: ""), nil),
        (BatchMessage(app: "a", job: "j", seq: 3, attempt: 2, after: "aa", through: "bb"), nil),
        (BatchMessage(app: "a", job: "j", seq: 0, attempt: 1, tokens: ["AABB"]), "tokens.0 is not a device token"),
        (BatchMessage(app: "a", job: "j", seq: 0, attempt: 1, tokens: ["zz"]), "tokens.0 is not a device token"),
        (BatchMessage(app: "a", job: "j", seq: -1, attempt: 1, tokens: []), "seq is out of range"),
        (BatchMessage(app: "a", job: "j", seq: 1 << 40, attempt: 1, tokens: []), "seq is out of range"),
        (BatchMessage(app: "a", job: "j", seq: 0, attempt: 0, tokens: []), "attempt is out of range"),
        (BatchMessage(app: "a", job: "j\n", seq: 0, attempt: 1, tokens: []), "job contains a control character"),
        (
            BatchMessage(app: "a", job: "j", seq: 0, attempt: 1, after: "x'", through: "bb"),
            "after is not a device token"
        ),
        (BatchMessage(app: "a", job: "j", seq: 0, attempt: 1), "neither tokens nor a range"),
    ])
    func batchMessagesAreCheckedToo(batch: BatchMessage, rule: String?) {
        if let rule {
            #expect { try batch.validate() } throws: { ($0 as? JobError)?.description.contains(rule) == true }
        } else {
            #expect(throws: Never.self) { try batch.validate() }
        }
    }
}
