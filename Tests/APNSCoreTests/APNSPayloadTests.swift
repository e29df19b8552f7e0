import APNSCore
import Foundation
import Testing

/// The typed `aps` vocabulary: Apple's key names exactly, round trips, and the rules checked before sending.
@Suite struct APNSPayloadTests {
    static func json(_ payload: APNSPayload) throws -> String {
        String(decoding: try payload.encoded(), as: UTF8.self)
    }

    @Test func stringAlertAndSoundEncodeAsPlainValues() throws {
        let payload = APNSPayload(aps: APS(alert: .text("Hello"), badge: 3, sound: .default))
        #expect(try Self.json(payload) == #"{"aps":{"alert":"Hello","badge":3,"sound":"default"}}"#)
    }

    @Test func everyKeyUsesApplesName() throws {
        let aps = APS(
            alert: .content(
                .init(
                    title: "T", subtitle: "S", body: "B", launchImage: "L", titleLocKey: "TK", titleLocArgs: ["a"],
                    subtitleLocKey: "SK", subtitleLocArgs: ["b"], locKey: "K", locArgs: ["c"]
                )
            ),
            badge: 0,
            sound: .critical(.init(name: "alarm.caf", volume: 0.5)),
            threadID: "thread",
            category: "cat",
            contentAvailable: true,
            mutableContent: true,
            targetContentID: "window",
            interruptionLevel: .timeSensitive,
            relevanceScore: 0.75,
            filterCriteria: "work"
        )
        let object = try JSONSerialization.jsonObject(with: Data(try APNSPayload(aps: aps).encoded())) as! [String: Any]
        let encoded = object["aps"] as! [String: Any]
        #expect(
            Set(encoded.keys) == [
                "alert", "badge", "sound", "thread-id", "category", "content-available", "mutable-content",
                "target-content-id", "interruption-level", "relevance-score", "filter-criteria",
            ]
        )
        let alert = encoded["alert"] as! [String: Any]
        #expect(
            Set(alert.keys) == [
                "title", "subtitle", "body", "launch-image", "title-loc-key", "title-loc-args", "subtitle-loc-key",
                "subtitle-loc-args", "loc-key", "loc-args",
            ]
        )
        let sound = encoded["sound"] as! [String: Any]
        #expect(sound["critical"] as? Int == 1)
        #expect(sound["name"] as? String == "alarm.caf")
        #expect(sound["volume"] as? Double == 0.5)
        #expect(encoded["content-available"] as? Int == 1)
        #expect(encoded["mutable-content"] as? Int == 1)
        #expect(encoded["interruption-level"] as? String == "time-sensitive")
    }

    @Test func liveActivityKeysAndCustomKeysBesideAPS() throws {
        let payload = APNSPayload(
            aps: APS(
                timestamp: 1_700_000_000, event: .update, contentState: ["score": "2-1", "minute": 67],
                staleDate: 1_700_000_600, dismissalDate: 1_700_003_600, attributesType: "MatchAttributes",
                attributes: ["home": "A"]
            ),
            custom: ["match": 42, "tags": ["x", "y"]]
        )
        let object = try JSONSerialization.jsonObject(with: Data(try payload.encoded())) as! [String: Any]
        #expect(object["match"] as? Int == 42)
        let aps = object["aps"] as! [String: Any]
        #expect(
            Set(aps.keys) == [
                "timestamp", "event", "content-state", "stale-date", "dismissal-date", "attributes-type", "attributes",
            ]
        )
        #expect(aps["event"] as? String == "update")
    }

    @Test func decodingRoundTrips() throws {
        let payload = APNSPayload(
            aps: APS(
                alert: .alert(title: "Goal!", body: "2–1"), badge: 1, sound: .named("goal.caf"), contentAvailable: true,
                interruptionLevel: .init(rawValue: "future-level"), event: .end,
                contentState: ["a": [1, 2.5, nil, true]]
            ),
            custom: ["nested": ["deep": ["k": "v"]]]
        )
        let decoded = try JSONDecoder().decode(APNSPayload.self, from: Data(try payload.encoded()))
        #expect(decoded == payload)
        let plain = try JSONDecoder().decode(
            APNSPayload.self, from: Data(#"{"aps":{"alert":"hi","sound":{"critical":1,"name":"a","volume":1}}}"#.utf8))
        #expect(plain.aps.alert == .text("hi"))
        #expect(plain.aps.sound == .critical(.init(name: "a", volume: 1)))
    }

    @Test(arguments: [
        (APNSPayload(aps: APS(badge: -1)), PushType.alert, APNSPayloadError.Rule.negativeBadge),
        (APNSPayload(aps: APS(sound: .critical(.init(name: "a", volume: 1.5)))), .alert, .soundVolume),
        (APNSPayload(aps: APS(relevanceScore: 2)), .alert, .relevanceScore),
        (APNSPayload(aps: APS(alert: .text("x"))), .background, .background),
        (APNSPayload(aps: APS(alert: .text("x"), contentAvailable: true)), .background, .background),
        (APNSPayload(aps: APS(alert: .content(.init()))), .alert, .emptyAlert),
        (APNSPayload(aps: APS(), custom: ["aps": 1]), .alert, .customKeyAPS),
        (APNSPayload(aps: APS(timestamp: 1)), .liveactivity, .liveActivity),
        (APNSPayload(aps: APS(event: .update)), .liveactivity, .liveActivity),
        (APNSPayload(aps: APS(timestamp: 1, event: .update)), .liveactivity, .liveActivity),
        (APNSPayload(aps: APS(timestamp: 1, event: .start, contentState: [:])), .liveactivity, .liveActivity),
        (APNSPayload(aps: APS(alert: .text(String(repeating: "x", count: 4100)))), .alert, .tooLarge),
    ])
    func validationNamesTheBrokenRule(payload: APNSPayload, pushType: PushType, rule: APNSPayloadError.Rule) {
        #expect(throws: APNSPayloadError.self) { try payload.validate(for: pushType) }
        do {
            try payload.validate(for: pushType)
        } catch {
            #expect(error.rule == rule)
        }
    }

    @Test func validPayloadsPassAndVoIPGetsFiveKilobytes() throws {
        try APNSPayload(aps: APS(contentAvailable: true)).validate(for: .background)
        try APNSPayload(aps: APS(relevanceScore: 42, timestamp: 1, event: .end)).validate(for: .liveactivity)
        let big = APNSPayload(aps: APS(), custom: ["blob": .string(String(repeating: "x", count: 4500))])
        #expect(try big.validate(for: .voip).count <= 5120)
        #expect(throws: APNSPayloadError.self) { try big.validate(for: .alert) }
    }
}
