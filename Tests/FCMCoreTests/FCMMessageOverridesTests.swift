import FCMCore
import Testing

@Suite struct FCMMessageOverridesTests {
    static let target = try! FCMTarget(fid: "dR_0123456789abcdefghi")

    static func overrides(_ json: String) throws -> FCMMessageOverrides {
        try FCMMessageOverrides(json: Array(json.utf8))
    }

    @Test func overridesAreMergedOverTheBuiltMessage() throws {
        let message = FCMMessage(
            notification: FCMNotification(title: "Hi"), data: ["a": "1", "b": "2"],
            android: FCMAndroidConfig(priority: .normal, ttl: 60, notification: FCMAndroidNotification(channelID: "c")),
            overrides: try Self.overrides(
                #"""
                {"android": {"priority": "high", "notification": {"color": "#ff0000", "notificationCount": 2},
                             "directBootOk": true},
                 "data": {"b": "3"}, "apns": {"headers": {"apns-priority": "5"}, "payload": {"aps": {"badge": 1}}},
                 "fcm_options": {"analytics_label": "spring-sale"}}
                """#))
        let body = String(decoding: try message.template().body(for: Self.target), as: UTF8.self)
        #expect(
            body
                == #"{"message":{"fid":"dR_0123456789abcdefghi","#
                + ##""android":{"direct_boot_ok":true,"notification":{"channel_id":"c","color":"#ff0000","##
                + #""notification_count":2},"priority":"HIGH","ttl":"60s"},"#
                + #""apns":{"headers":{"apns-priority":"5"},"payload":{"aps":{"badge":1}}},"#
                + #""data":{"a":"1","b":"3"},"fcm_options":{"analytics_label":"spring-sale"},"#
                + #""notification":{"title":"Hi"}}}"#)
    }

    @Test func anEmptyBlockChangesNothing() throws {
        let overrides = try Self.overrides("{}")
        #expect(overrides.isEmpty)
        let plain = FCMMessage(data: ["a": "1"])
        var overridden = plain
        overridden.overrides = overrides
        #expect(try plain.template().body(for: Self.target) == overridden.template().body(for: Self.target))
    }

    static let refused: [(json: String, field: String)] = [
        (#"{"token": "x"}"#, "fcm.token"),
        (#"{"topic": "news"}"#, "fcm.topic"),
        (#"{"condition": "'a' in topics"}"#, "fcm.condition"),
        (#"{"fid": "cR_0123456789abcdefghi"}"#, "fcm.fid"),
        (#"{"name": "x"}"#, "fcm.name"),
        (#"{"android": {"ttl": "2419201s"}}"#, "fcm.android.ttl"),
        (#"{"android": {"ttl": "1.5"}}"#, "fcm.android.ttl"),
        (#"{"android": {"ttl": 60}}"#, "fcm.android.ttl"),
        (#"{"android": {"priority": "urgent"}}"#, "fcm.android.priority"),
        (#"{"android": {"bogus": 1}}"#, "fcm.android.bogus"),
        (#"{"android": {"collapseKey": "a", "collapse_key": "b"}}"#, "fcm.android.collapse_key"),
        (#"{"android": {"data": {"gcm.x": "1"}}}"#, "fcm.android.data.gcm.x"),
        (#"{"android": {"notification": {"color": "red"}}}"#, "fcm.android.notification.color"),
        (#"{"android": {"notification": {"sticky": "yes"}}}"#, "fcm.android.notification.sticky"),
        (#"{"android": {"notification": {"visibility": "HIDDEN"}}}"#, "fcm.android.notification.visibility"),
        (
            #"{"android": {"notification": {"vibrate_timings": ["1s", "x"]}}}"#,
            "fcm.android.notification.vibrate_timings[1]"
        ),
        (
            #"{"android": {"notification": {"light_settings": {"color": {"red": 1}, "light_on_duration": "1s"}}}}"#,
            "fcm.android.notification.light_settings.light_off_duration"
        ),
        (#"{"data": {"from": "x"}}"#, "fcm.data.from"),
        (#"{"data": {"n": 1}}"#, "fcm.data.n"),
        (#"{"notification": {"title": 5}}"#, "fcm.notification.title"),
        (#"{"fcm_options": {"analytics_label": "has space"}}"#, "fcm.fcm_options.analytics_label"),
        (#"{"apns": {"payload": "aps"}}"#, "fcm.apns.payload"),
        (#"{"webpush": {"fcm_options": {"link": "http://example.com"}}}"#, "fcm.webpush.fcm_options.link"),
        (#"{"android": []}"#, "fcm.android"),
        ("[]", "fcm"),
        ("{", "fcm"),
    ]

    @Test(arguments: refused)
    func badOverridesAreRefusedWithTheFieldPath(json: String, field: String) {
        #expect {
            try Self.overrides(json)
        } throws: { error in
            (error as! FCMMessageError).field == field
        }
    }

    @Test func theTargetCannotBeOverriddenAndTheReasonSaysSo() {
        #expect {
            try Self.overrides(#"{"token": "x"}"#)
        } throws: { error in
            let error = error as! FCMMessageError
            return error.code == .unknownField && "\(error)" == "fcm.token: is set by Herald (the device's target)"
        }
    }

    @Test func overriddenDataCountsTowardsThePayloadLimit() throws {
        let message = FCMMessage(
            data: ["k": String(repeating: "v", count: 4000)],
            overrides: try Self.overrides(#"{"android": {"data": {"big": "\#(String(repeating: "w", count: 4094))"}}}"#)
        )
        #expect { try message.template() } throws: { ($0 as! FCMMessageError).code == .tooLarge }
    }

    @Test func anOversizedBlockIsRefusedUnread() {
        let big = Array(repeating: UInt8(ascii: " "), count: FCMMessageOverrides.maximumSize + 1)
        #expect { try FCMMessageOverrides(json: big) } throws: { ($0 as! FCMMessageError).code == .tooLarge }
    }
}
