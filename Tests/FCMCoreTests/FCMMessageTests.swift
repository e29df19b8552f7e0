import FCMCore
import Testing

@Suite struct FCMMessageTests {
    static let token = try! FCMTarget(token: "dGVzdA:APA91bHPRgkF3JUikC4ENAHEeMrd41Zxv3hVZjC9KtT8OvPVGJ")
    static let fid = try! FCMTarget(fid: "cR_0123456789abcdefghi")

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static let representative = FCMMessage(
        notification: FCMNotification(title: "Order shipped", body: "Your \"order\" is on its way"),
        data: ["order_id": "42", "deep_link": "app://orders/42"],
        android: FCMAndroidConfig(
            collapseKey: "orders", priority: .high, ttl: 3600,
            notification: FCMAndroidNotification(channelID: "orders", notificationCount: 3)))

    @Test func aRepresentativeJobEncodesExactly() throws {
        let template = try Self.representative.template()
        #expect(
            Self.text(template.body(for: Self.token))
                == #"{"message":{"token":"dGVzdA:APA91bHPRgkF3JUikC4ENAHEeMrd41Zxv3hVZjC9KtT8OvPVGJ","#
                + #""android":{"collapse_key":"orders","notification":{"channel_id":"orders","notification_count":3},"#
                + #""priority":"HIGH","ttl":"3600s"},"data":{"deep_link":"app://orders/42","order_id":"42"},"#
                + #""notification":{"body":"Your \"order\" is on its way","title":"Order shipped"}}}"#)
    }

    @Test func onlyTheTargetDiffersBetweenDevices() throws {
        let template = try Self.representative.template(validateOnly: true)
        let tokenBody = Self.text(template.body(for: Self.token))
        let fidBody = Self.text(template.body(for: Self.fid))
        #expect(fidBody.hasPrefix(#"{"message":{"fid":"cR_0123456789abcdefghi","android":"#))
        #expect(tokenBody.hasSuffix(#"}},"validate_only":true}"#))
        #expect(tokenBody.drop { $0 != "," } == fidBody.drop { $0 != "," })
        #expect(try Self.representative.template(validateOnly: true) == template)
    }

    @Test func aMessageWithNothingButATargetIsValidJSON() throws {
        let body = try FCMMessage().template().body(for: Self.fid)
        #expect(Self.text(body) == #"{"message":{"fid":"cR_0123456789abcdefghi"}}"#)
    }

    @Test func customDataValuesBecomeStrings() throws {
        let custom = #"""
            {"s": "text", "e": "caf\u00e9", "n": 1.50, "i": -7, "big": 12345678901234567890, "b": true,
             "z": null, "o": {"b": 2, "a": [1, "x", {"k": false}]}, "a": []}
            """#
        let data = try FCMData(stringifying: Array(custom.utf8))
        #expect(
            data.values == [
                "s": "text", "e": "café", "n": "1.50", "i": "-7", "big": "12345678901234567890", "b": "true",
                "z": "null", "o": #"{"a":[1,"x",{"k":false}],"b":2}"#, "a": "[]",
            ])
    }

    @Test(arguments: ["[1]", "\"s\"", "{", #"{"a":1,"a":2}"#, "{\"a\":\"\u{1}\"}"])
    func customDataThatIsNotAnObjectIsRefused(text: String) {
        #expect { try FCMData(stringifying: Array(text.utf8)) } throws: { error in
            let error = error as! FCMMessageError
            return error.code == .malformedJSON && error.field == "data"
        }
    }

    @Test(arguments: ["from", "message_type", "google.sent_time", "googleish", "gcm.notification.e", "GCM_x", ""])
    func reservedDataKeysAreRefused(key: String) {
        #expect { try FCMMessage(data: [key: "v"]).template() } throws: { error in
            let error = error as! FCMMessageError
            return error.code == .reservedKey && error.field == "data.\(key)"
        }
    }

    @Test func builtFieldsOutOfRangeNameTheirPath() {
        let cases: [(FCMMessage, String)] = [
            (FCMMessage(android: FCMAndroidConfig(ttl: 2_419_201)), "android.ttl"),
            (FCMMessage(android: FCMAndroidConfig(ttl: -1)), "android.ttl"),
            (FCMMessage(notification: FCMNotification(image: "ftp://x/y.png")), "notification.image"),
            (
                FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification(color: "red"))),
                "android.notification.color"
            ),
            (
                FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification(notificationCount: -1))),
                "android.notification.notification_count"
            ),
        ]
        for (message, field) in cases {
            #expect { try message.template() } throws: { ($0 as! FCMMessageError).field == field }
        }
        #expect(throws: Never.self) { try FCMMessage(android: FCMAndroidConfig(ttl: 2_419_200)).template() }
        #expect(throws: Never.self) { try FCMMessage(android: FCMAndroidConfig(ttl: 0)).template() }
    }

    @Test func thePayloadLimitCountsDataAndNotificationKeysAndValues() throws {
        // "k" + 4095 bytes = 4096: the limit itself.
        let atLimit = FCMMessage(data: ["k": String(repeating: "v", count: 4095)])
        #expect(try atLimit.template().payloadSize == 4096)
        let over = FCMMessage(
            notification: FCMNotification(title: "t"), data: ["k": String(repeating: "v", count: 4095)])
        #expect { try over.template() } throws: { error in
            let error = error as! FCMMessageError
            return error.code == .tooLarge && "\(error)".contains("4102") && !"\(error)".contains("vvvv")
        }
    }
}
