import Testing

@testable import FCMCore

/// The direct writer of a message without overrides gives the bytes and the payload size the general path gives.
@Suite struct FCMDirectTemplateTests {
    static let messages: [FCMMessage] = [
        FCMMessage(),
        FCMMessage(notification: FCMNotification(title: "Hi", body: "there")),
        FCMMessage(notification: FCMNotification(image: "https://example.com/a.png")),
        FCMMessage(notification: FCMNotification()),
        FCMMessage(data: ["b": "2", "a": "1", "quote\"d": "line\nbreak", "é": "ü"]),
        FCMMessage(android: FCMAndroidConfig(priority: .normal, ttl: 0)),
        FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification())),
        FCMMessage(android: FCMAndroidConfig()),
        FCMMessage(android: FCMAndroidConfig(ttl: 30)),
        FCMMessage(android: FCMAndroidConfig(collapseKey: "c", ttl: 30)),
        FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification(channelID: "news"))),
        FCMMessage(
            android: FCMAndroidConfig(
                ttl: 0, notification: FCMAndroidNotification(channelID: "news", body: "b", clickAction: "OPEN"))),
        FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification(channelID: "n", body: "b"))),
        FCMMessage(android: FCMAndroidConfig(notification: FCMAndroidNotification(channelID: "n", sound: "s"))),
        FCMMessage(
            notification: FCMNotification(title: "T", body: "B"), data: ["job": "j", "n": "7"],
            android: FCMAndroidConfig(
                collapseKey: "c", priority: .high, ttl: 2_419_200,
                notification: FCMAndroidNotification(
                    channelID: "news", title: "t", body: "b", titleLocKey: "TK", titleLocArgs: ["x", "y\""],
                    bodyLocKey: "BK", bodyLocArgs: [], icon: "i", color: "#ff0000", sound: "default", tag: "g",
                    clickAction: "OPEN", image: "https://example.com/b.png", notificationCount: 3))),
    ]

    @Test(arguments: messages.indices) func theDirectWriterMatchesTheGeneralPath(_ index: Int) throws {
        let message = Self.messages[index]
        for validateOnly in [false, true] {
            #expect(
                try message.template(validateOnly: validateOnly, checked: false)
                    == (try message.template(validateOnly: validateOnly))
            )
        }
    }

    /// Parts written once take any send's TTL and channel: the same bytes as the message written with them.
    @Test(arguments: messages.indices) func partsTakeEachSendsTTLAndChannel(_ index: Int) throws {
        let parts = FCMMessageParts(Self.messages[index])
        for ttl: Int64? in [nil, 0, 86_400] {
            for channel: String? in [nil, "news", "a\"b"] {
                var message = Self.messages[index]
                message.android?.ttl = ttl
                message.android?.notification?.channelID = channel
                #expect(try parts.template(ttl: ttl, channelID: channel) == (try message.template()))
                // One device's body written whole is the template's body for it.
                let targets = [
                    FCMTarget(trustedKind: .token, value: "d7Xq:APA91b-x_y"),
                    FCMTarget(trustedKind: .fid, value: "a\"b"),
                ]
                for target in targets {
                    #expect(
                        parts.body(for: target, ttl: ttl, channelID: channel)
                            == (try message.template()).body(for: target))
                }
            }
        }
    }

    @Test func anUncheckedMessageOverTheSizeLimitIsStillRefused() {
        let message = FCMMessage(data: ["k": String(repeating: "x", count: FCMMessage.maximumPayloadSize)])
        #expect(throws: FCMMessageError.self) { try message.template(checked: false) }
        #expect(throws: FCMMessageError.self) { try FCMMessageParts(message).checkPayloadSize() }
        #expect(throws: Never.self) { try FCMMessageParts(FCMMessage(data: ["k": "v"])).checkPayloadSize() }
    }
}
