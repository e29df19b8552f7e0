import APNSCore
import FCMCore
import Foundation
import HeraldCore
import Testing

/// A job as an Android device gets it (docs/fcm.md, "What an Android device gets"), and the worker's trust in its
/// own builder: the message it builds is one FCM's rules accept, so validating it per job is skipped.
@Suite struct NotificationTemplateFCMTests {
    static func job(_ notification: String) throws -> PreparedJob {
        let body =
            #"{"id":"j","app":"a","target":{"tokens":["\#(String(repeating: "ab", count: 32))"]},"notification":\#(notification)}"#
        return try PreparedJob.decode(Array(body.utf8)) { "j" }
    }

    static let jobs = [
        #"{"aps":{"alert":{"title":"Hi","body":"there","loc-key":"K","loc-args":["a","b"]},"sound":"default","badge":3},"custom":{"n":1,"o":{"x":[1,2]},"s":"t"},"collapse_id":"c","priority":5,"expiration":1}"#,
        #"{"aps":{"alert":"plain"},"localizations":{"fr":{"title":"Salut","body":"toi"}},"badge_increment":1}"#,
        #"{"push_type":"background","aps":{"content-available":1},"custom":{"k":"v"},"expiration":0}"#,
        #"{"aps":{"alert":"say \"hi\" é","sound":"ping","badge":0},"custom":{"b":true,"f":false,"z":null,"neg":-42,"d":2.5,"big":9007199254740993,"e":"","a":[]}}"#,
    ]

    /// Custom data reaches Android with every value a string: strings as they are, anything else its compact JSON
    /// text (the scalars are written without the encoder; the text is the encoder's).
    @Test(arguments: jobs) func everyCustomValueIsSentAsItsCompactJSONText(_ notification: String) throws {
        let template = try Self.job(notification).template
        let message = template.fcmMessage(variant: nil, badge: nil, now: 0, channelID: nil, overrides: nil)
        #expect(message.data.values.count == template.custom.count)
        for (key, value) in template.custom {
            let expected: String
            if case .string(let text) = value {
                expected = text
            } else {
                expected = String(decoding: try value.jsonBytes(), as: UTF8.self)
            }
            #expect(message.data[key] == expected)
        }
    }

    @Test(arguments: jobs) func theBuiltMessageIsOneFCMsRulesAcceptAsItIs(_ notification: String) throws {
        let template = try Self.job(notification).template
        for variant in [nil] + template.localizations.keys.map(Optional.some) {
            let message = template.fcmMessage(
                variant: variant, badge: 7, now: 1_000, channelID: "news", overrides: nil)
            #expect(try message.template(checked: true) == (try message.template(checked: false)))
        }
    }

    @Test func theNeutralPartsBecomeTheMessageACarefulEngineerWouldWrite() throws {
        let template = try Self.job(Self.jobs[0]).template
        let message = template.fcmMessage(variant: nil, badge: nil, now: 0, channelID: "news", overrides: nil)
        let body = try message.template().body(for: FCMTarget(token: "d7Xq:APA91b" + String(repeating: "x", count: 40)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let sent = try #require(object["message"] as? [String: Any])
        #expect((sent["notification"] as? [String: String]) == ["title": "Hi", "body": "there"])
        #expect((sent["data"] as? [String: String]) == ["n": "1", "o": #"{"x":[1,2]}"#, "s": "t"])
        let android = try #require(sent["android"] as? [String: Any])
        #expect(android["collapse_key"] as? String == "c")
        #expect(android["priority"] as? String == "NORMAL")
        #expect(android["ttl"] as? String == "1s")
        let shown = try #require(android["notification"] as? [String: Any])
        #expect(shown["channel_id"] as? String == "news")
        #expect(shown["body_loc_key"] as? String == "K")
        #expect(shown["notification_count"] as? Int == 3)
        #expect(shown["sound"] as? String == "default")
        // A background push is data only; a Live Activity or VoIP push does not reach Android at all.
        let background = try Self.job(Self.jobs[2]).template
        #expect(background.reachesAndroid)
        #expect(
            background.fcmMessage(variant: nil, badge: nil, now: 0, channelID: nil, overrides: nil).notification == nil)
        #expect(!(try Self.job(#"{"push_type":"voip","aps":{}}"#).template.reachesAndroid))
    }

    /// A job that lists an Android device has its message written ahead when the worker asks (`writeFCMParts`, for
    /// the small jobs it groups); each device's body a send writes from those parts is byte for byte the one the
    /// general path's template gives, at any time, for any channel and either kind of target.
    @Test(arguments: jobs) func aMessageWrittenAheadIsTheOneWrittenAtTheSend(_ notification: String) throws {
        let android = "d7Xq:APA91b" + String(repeating: "x", count: 140)
        let body =
            #"{"id":"j","app":"a","target":{"tokens":["\#(android)"]},"notification":\#(notification)}"#
        var job = try PreparedJob.decode(Array(body.utf8)) { "j" }
        // Reading a job writes nothing ahead (the API, the producer and `herald publish` only validate).
        #expect(job.template.fcmParts == nil)
        #expect(try job.template.fcmPartsToSend(now: 0) == nil)
        job.writeFCMParts()
        let ahead = job.template
        let atSend = try Self.job(notification).template
        // Parts only for one message for every device: not for the job with localizations and a badge counter.
        #expect((ahead.fcmParts != nil) == !ahead.variesPerDevice)
        guard ahead.fcmParts != nil else { return }
        let targets = [FCMTarget(trustedKind: .token, value: android), FCMTarget(trustedKind: .fid, value: "c\"d")]
        for now: Int64 in [0, 1, 1_000, 5_000_000_000] {
            for channel in [nil, "news"] {
                let general = try atSend.fcmMessage(
                    variant: nil, badge: nil, now: now, channelID: channel, overrides: nil
                ).template(checked: true)
                #expect(try atSend.fcmTemplate(now: now, channelID: channel) == general)
                let (parts, ttl) = try #require(try ahead.fcmPartsToSend(now: now))
                for target in targets {
                    #expect(parts.body(for: target, ttl: ttl, channelID: channel) == general.body(for: target))
                }
            }
        }
    }

    /// Nothing is written ahead where it would go unused or be wrong: a job of iOS devices only (it would cost
    /// every iOS job), one that leaves Android out, one with an `fcm` block (merged at the send), one whose push
    /// type does not reach Android, one whose message varies per device.
    @Test func aMessageIsWrittenAheadOnlyForAJobThatSendsOneMessageToAListedAndroidDevice() throws {
        let android = "d7Xq:APA91b" + String(repeating: "x", count: 140)
        func parts(_ target: String, _ notification: String = #"{"aps":{"alert":"hi"}}"#) throws -> Bool {
            let body = #"{"id":"j","app":"a","target":\#(target),"notification":\#(notification)}"#
            var job = try PreparedJob.decode(Array(body.utf8)) { "j" }
            job.writeFCMParts()
            return job.template.fcmParts != nil
        }
        #expect(try parts(#"{"tokens":["\#(android)"]}"#))
        #expect(try parts(#"{"tokens":["\#(String(repeating: "ab", count: 32))","\#(android)"]}"#))
        #expect(try !parts(#"{"tokens":["\#(String(repeating: "ab", count: 32))"]}"#))
        #expect(try !parts(#"{"tokens":["\#(android)"],"platforms":["ios"]}"#))
        #expect(try parts(#"{"tokens":["\#(android)"],"platforms":["android"]}"#))
        #expect(try !parts(#"{"tokens":["\#(android)"]}"#, #"{"aps":{"alert":"hi"},"fcm":{"android":{"ttl":"5s"}}}"#))
        #expect(try !parts(#"{"tokens":["\#(android)"]}"#, #"{"push_type":"voip","aps":{}}"#))
        #expect(try !parts(#"{"tokens":["\#(android)"]}"#, #"{"aps":{"alert":"hi"},"badge_increment":1}"#))
        #expect(try !parts(#"{"all":true}"#))
    }

    /// An `fcm` block set after the message was written ahead still reaches the device: the parts are not used.
    @Test func anFCMBlockSetLaterIsMergedNotDropped() throws {
        let android = "d7Xq:APA91b" + String(repeating: "x", count: 140)
        let body = #"{"id":"j","app":"a","target":{"tokens":["\#(android)"]},"notification":{"aps":{"alert":"hi"}}}"#
        var job = try PreparedJob.decode(Array(body.utf8)) { "j" }
        job.writeFCMParts()
        var template = job.template
        #expect(template.fcmParts != nil)
        let overrides = try FCMMessageOverrides(jobBlock: Array(#"{"android":{"ttl":"5s"}}"#.utf8))
        template.fcmOverrides = overrides
        let merged = try template.fcmMessage(variant: nil, badge: nil, now: 0, channelID: nil, overrides: overrides)
            .template(checked: false)
        #expect(try template.fcmTemplate(now: 0, channelID: nil) == merged)
        #expect(try template.fcmPartsToSend(now: 0) == nil)
        #expect(try job.template.fcmPartsToSend(now: 0) != nil)
    }
}
