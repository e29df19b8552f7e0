import APNSCore
import Foundation
import HeraldCore
import Testing

/// `Job.jsonBytes`, the encoder producers, the API and the bench publish with: the document reads back as the same
/// job, the same job `JSONEncoder`'s document reads back as, for every target and every notification field.
@Suite struct JobEncodingTests {
    static let full = JobNotification(
        pushType: "alert", priority: 5, expiration: 1_900_000_000, collapseID: "c/1 \"q\"",
        aps: ["alert": .object(["title": "T", "body": "line\nbreak \u{1F600}"]), "badge": .integer(3)],
        custom: ["url": "https://example.com/a/b", "n": .number(1.5), "list": .array([.null, .bool(false)])],
        localizations: ["fr": .object(["body": "Bonjour"])], badgeIncrement: -2,
        fcm: ["android": .object(["ttl": "60s"])], webpush: ["declarative": .bool(true)])

    static let targets: [Target] = [
        .tokens(["aabb", "ccdd"]), .users(["u1"]), .topic("news"), .all, .activity("a1"), .channel("ch=="),
        .activityTokens(["eeff"]), .filtered(.topic("news"), locales: ["fr", "de-CH"]),
        .filtered(.all, locales: ["fr"]), .platforms(.users(["u1", "u2"]), [.android, .ios]),
        .platforms(.filtered(.all, locales: ["fr"]), [.web]),
    ]

    static let jobs: [Job] =
        targets.map { Job(id: "j-1", app: "app", target: $0, notification: full, sendAt: nil, throttlePerSecond: 7) }
        + [
            Job(app: "a", target: .tokens(["aa"]), notification: JobNotification(aps: ["alert": "hi"])),
            Job(
                app: "a", target: .all, notification: JobNotification(aps: [:]),
                sendAt: "2030-01-01T00:00:00Z"),
        ]

    @Test(arguments: jobs)
    func readsBackAsTheSameJobAsFoundationsDocument(_ job: Job) throws {
        let fast = try job.jsonBytes()
        #expect(try Job(json: PayloadValue(json: fast)) == job)
        let foundation = try JSONEncoder().encode(job)
        #expect(
            try JSONDecoder().decode(Job.self, from: Data(fast)) == JSONDecoder().decode(Job.self, from: foundation))
    }

    @Test func writesCompactJSONWithKeysSortedAndAbsentFieldsLeftOut() throws {
        let job = Job(
            app: "a", target: .platforms(.filtered(.topic("t"), locales: ["fr"]), [.ios]),
            notification: JobNotification(priority: 10, aps: ["sound": "x.caf", "alert": "a/b"]),
            throttlePerSecond: 3)
        #expect(
            String(decoding: try job.jsonBytes(), as: UTF8.self)
                == #"{"app":"a","notification":{"aps":{"alert":"a/b","sound":"x.caf"},"priority":10},"#
                + #""target":{"locales":["fr"],"platforms":["ios"],"topic":"t"},"throttle_per_second":3}"#)
    }

    @Test func writesEveryNotificationFieldInItsPlace() throws {
        let job = Job(
            id: "j", app: "a", target: .tokens(["aa"]), notification: Self.full, sendAt: "2030-01-01T00:00:00Z",
            throttlePerSecond: 7)
        let expected =
            #"{"app":"a","id":"j","notification":{"aps":{"alert":{"body":"line\nbreak \#u{1F600}","title":"T"},"#
            + #""badge":3},"badge_increment":-2,"collapse_id":"c/1 \"q\"","#
            + #""custom":{"list":[null,false],"n":1.5,"url":"https://example.com/a/b"},"expiration":1900000000,"#
            + #""fcm":{"android":{"ttl":"60s"}},"localizations":{"fr":{"body":"Bonjour"}},"priority":5,"#
            + #""push_type":"alert","webpush":{"declarative":true}},"send_at":"2030-01-01T00:00:00Z","#
            + #""target":{"tokens":["aa"]},"throttle_per_second":7}"#
        #expect(String(decoding: try job.jsonBytes(), as: UTF8.self) == expected)
    }

    @Test func refusesANumberJSONCannotHold() {
        let job = Job(app: "a", target: .all, notification: JobNotification(aps: ["x": .number(.nan)]))
        #expect(throws: PayloadValue.JSONError.self) { try job.jsonBytes() }
    }
}
