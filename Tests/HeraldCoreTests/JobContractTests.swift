import APNSCore
import HeraldCore
import Testing

/// The rules `schemas/job.schema.json` states and the validator enforces, one case per rule: each of these was
/// either accepted by one and refused by the other, or silently ignored (issues 32 and 33).
@Suite struct JobContractTests {
    static func decode(_ json: String) throws(JobError) -> PreparedJob {
        try PreparedJob.decode(Array(json.utf8)) { "generated-id" }
    }

    static func job(
        top: String = "", target: String = #"{"tokens":["aabb"]}"#, notification: String = "",
        aps: String = #""alert":"hi""#
    ) -> String {
        #"{"app":"a","target":\#(target)\#(top),"notification":{"aps":{\#(aps)}\#(notification)}}"#
    }

    @Test(arguments: [
        // Unknown fields, with the nearest known name.
        (job(top: #","sendAt":"2030-01-01T00:00:00Z""#), "unknown field sendAt in the job; did you mean send_at?"),
        (
            job(notification: #","colapse_id":"x""#),
            "unknown field colapse_id in notification; did you mean collapse_id?"
        ),
        (job(target: #"{"all":true,"locale":["fr"]}"#), "unknown field locale in target; did you mean locales?"),
        (job(top: #","zzzzzzzz":1"#), "unknown field zzzzzzzz in the job (known fields: id, app,"),
        // An alert push with nothing to show, and the background rules.
        (job(aps: ""), "an alert push needs aps.alert, aps.sound or aps.badge"),
        (job(aps: #""content-available":1"#), "send push_type background with aps.content-available 1"),
        (job(notification: #","push_type":"background""#, aps: #""content-available":0"#), "content-available"),
        (
            job(notification: #","push_type":"background""#, aps: #""content-available":1,"alert":"x""#),
            "a background push shows nothing"
        ),
        (
            job(notification: #","push_type":"background","badge_increment":1"#, aps: #""content-available":1"#),
            "a background push shows nothing"
        ),
        // Types of the aps keys the rules read.
        (job(aps: #""alert":null"#), "aps.alert must be a string or an object"),
        (job(aps: #""alert":5"#), "aps.alert must be a string or an object"),
        (job(aps: #""badge":-1"#), "aps.badge must be a whole number from 0 to 2147483647"),
        (job(aps: #""badge":"1""#), "aps.badge must be a whole number"),
        // BCP 47 tags: a letter first, subtags of 1 to 8.
        (job(target: #"{"all":true,"locales":["1en"]}"#), "target.locales.0 is not a BCP 47 tag"),
        (job(target: #"{"all":true,"locales":["en--US"]}"#), "target.locales.0 is not a BCP 47 tag"),
        (job(target: #"{"all":true,"locales":["abcdefghi"]}"#), "target.locales.0 is not a BCP 47 tag"),
        (job(notification: #","localizations":{"1fr":"x"}"#), "localizations has a key that is not a BCP 47 tag"),
        (job(notification: #","localizations":{"fr":1}"#), "localizations values must be a string or an object"),
        // Numbers: out of range, never the wrong type, however large.
        (job(notification: #","expiration":9007199254740993"#), "notification.expiration is out of range"),
        (job(notification: #","expiration":1e20"#), "notification.expiration is out of range"),
        (job(notification: #","expiration":99999999999999999999"#), "notification.expiration is out of range"),
        (job(notification: #","expiration":1.5"#), "notification.expiration has the wrong type"),
        (job(notification: #","priority":1e300"#), "notification.priority is out of range"),
        // Dates: RFC 3339 with a four-digit year, a real day.
        (job(top: #","send_at":"300000-01-01T00:00:00Z""#), "send_at is not an RFC 3339 date-time"),
        (job(top: #","send_at":"2026-02-29T00:00:00Z""#), "send_at is not an RFC 3339 date-time"),
        (job(top: #","send_at":"2026-01-01 00:00:00Z""#), "send_at is not an RFC 3339 date-time"),
        // Channel ids are base64 before anything is asked of Apple.
        (
            job(target: #"{"channel":"abc"}"#, notification: #","push_type":"liveactivity""#, aps: #""event":"end""#),
            "target.channel is not a channel id"
        ),
        // Lengths in characters.
        (job(top: #","id":"\#(String(repeating: "é", count: 129))""#), "id is 129 characters, over 128"),
        // U+0000 anywhere.
        (job(aps: #""alert":"a\u0000b""#), "U+0000"),
        // A Live Activity needs its event.
        (job(target: #"{"activity":"a1"}"#, notification: #","push_type":"liveactivity""#, aps: ""), "aps.event"),
    ])
    func refusesWithTheRule(json: String, rule: String) {
        #expect {
            _ = try Self.decode(json)
        } throws: { error in
            (error as? JobError)?.message.contains(rule) == true
        }
    }

    @Test(arguments: [
        job(aps: #""sound":"default""#),
        job(aps: #""badge":0"#),
        job(notification: #","badge_increment":1"#, aps: ""),
        job(top: #","id":"\#(String(repeating: "é", count: 128))""#),
        job(top: #","id":null,"send_at":null,"throttle_per_second":null"#),
        job(notification: #","expiration":1.0e2,"priority":5.0,"collapse_id":null,"custom":null"#),
        job(target: #"{"all":true,"locales":["en_US","zh-Hant-TW","fr"]}"#),
        job(notification: #","localizations":{"fr":"salut","pt-BR":{"body":"oi"}}"#),
        job(top: #","send_at":"2024-02-29T23:59:60.123456789+23:59""#),
        job(top: #","send_at":"0001-01-01t00:00:00z""#),
        job(notification: #","push_type":"background""#, aps: #""content-available":1"#),
        job(notification: #","push_type":"voip""#, aps: ""),
    ])
    func accepts(json: String) throws {
        _ = try Self.decode(json)
    }

    @Test func aBackgroundPushWithoutPriorityIsSentAtFive() throws {
        let background = try Self.decode(
            Self.job(notification: #","push_type":"background""#, aps: #""content-available":1"#))
        #expect(background.template.priority == .conservePower)
        #expect(background.brokerPriority(bulk: false) == 1)
        let alert = try Self.decode(Self.job())
        #expect(alert.template.priority == nil)
    }

    @Test(arguments: [
        ("2026-11-21T12:00:00Z", Int64(1_795_262_400_000)),
        ("2026-11-21T12:00:00.5Z", Int64(1_795_262_400_500)),
        ("2026-11-21T13:00:00+01:00", Int64(1_795_262_400_000)),
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("1969-12-31T23:59:59.999Z", Int64(-1)),
        ("9999-12-31T23:59:59Z", Int64(253_402_300_799_000)),
    ])
    func rfc3339IsReadExactly(text: String, milliseconds: Int64) {
        #expect(RFC3339.milliseconds(text) == milliseconds)
    }

    @Test(arguments: [
        "300000-01-01T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:61Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00.Z",
        "2026-01-01T00:00:00Z ", "", "now",
    ])
    func rfc3339RefusesTheRest(text: String) {
        #expect(RFC3339.milliseconds(text) == nil)
    }

    @Test(arguments: [
        ("sendAt", "send_at"), ("colapse_id", "collapse_id"), ("PushType", "push_type"), ("app", "app"),
        ("notificaton", "notification"), ("xyzzy", nil), ("", nil),
    ])
    func theNearestKnownName(name: String, nearest: String?) {
        #expect(JobFieldSuggestion.nearest(to: name, in: Job.fieldNames + JobNotification.fieldNames) == nearest)
    }

    @Test(arguments: [
        ("dHN0LXNyY2gtY2hubA==", true), ("bm90LXJlY29yZGVk", true), ("abc=", true), ("ab==", true),
        ("abc", false), ("a===", false), ("ab-_", false), ("", false), ("ab=c", false),
        (String(repeating: "A", count: 204), false),
    ])
    func channelIDs(id: String, valid: Bool) {
        #expect(ChannelID.isValid(id) == valid)
    }
}
