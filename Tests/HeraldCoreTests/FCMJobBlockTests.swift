import FCMCore
import Foundation
import HeraldCore
import Testing

/// A job's `fcm` block: `schemas/job.schema.json` states the strict rules `FCMMessageOverrides(jobBlock:)` applies,
/// generated from the same shapes, and the block reaches the Android message.
@Suite struct FCMJobBlockTests {
    static let schemaURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schemas/job.schema.json")

    /// The value without its `description`s, as canonical JSON text.
    static func canonical(_ value: Any) throws -> String {
        func strip(_ value: Any) -> Any {
            if let object = value as? [String: Any] {
                return object.filter { $0.key != "description" }.mapValues(strip)
            }
            if let array = value as? [Any] { return array.map(strip) }
            return value
        }
        let data = try JSONSerialization.data(
            withJSONObject: strip(value), options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    @Test("the published $defs/fcm is the schema of the strict validation's shapes")
    func publishedSchemaIsGenerated() throws {
        let schema = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.schemaURL)) as? [String: Any]
        let published = (schema?["$defs"] as? [String: Any])?["fcm"] ?? [String: Any]()
        let generated = try JSONSerialization.jsonObject(with: Data(FCMMessageOverrides.jobBlockSchema.utf8))
        #expect(
            try Self.canonical(published) == Self.canonical(generated),
            "schemas/job.schema.json $defs/fcm differs from FCMMessageOverrides.jobBlockSchema:\n\(FCMMessageOverrides.jobBlockSchema)"
        )
    }

    static func job(_ block: String) -> String {
        #"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"fcm":\#(block)}}"#
    }

    @Test(
        "a block breaking a rule is refused, naming the field",
        arguments: [
            (#"{"token":"x"}"#, "notification.fcm.token"),
            (#"{"android":{"ttl":"30"}}"#, "notification.fcm.android.ttl"),
            (#"{"android":{"ttl":"030s"}}"#, "notification.fcm.android.ttl"),
            (#"{"android":{"ttl":"2419201s"}}"#, "notification.fcm.android.ttl"),
            (#"{"android":{"priority":"high"}}"#, "notification.fcm.android.priority"),
            (#"{"android":{"collapseKey":"x"}}"#, "notification.fcm.android.collapseKey"),
            (#"{"data":{"from":"x"}}"#, "notification.fcm.data.from"),
            (#"{"data":{"n":1}}"#, "notification.fcm.data.n"),
            (##"{"android":{"notification":{"color":"red"}}}"##, "notification.fcm.android.notification.color"),
            (#"{"webpush":{"fcm_options":{"link":"http://x"}}}"#, "notification.fcm.webpush.fcm_options.link"),
            (#"{"android":{"notification":{"notification_count":-1}}}"#, "notification_count"),
            (#"[]"#, "notification.fcm"),
        ])
    func refused(block: String, field: String) {
        #expect {
            _ = try PreparedJob.decode(Array(Self.job(block).utf8)) { "id" }
        } throws: { error in
            "\(error)".contains(field)
        }
    }

    @Test("an accepted block is merged over the message Herald builds")
    func merged() throws {
        let prepared = try PreparedJob.decode(
            Array(
                Self.job(
                    ##"{"android":{"ttl":"60s","priority":"NORMAL","notification":{"color":"#11aa22","notification_count":2.0}},"data":{"k":"v"}}"##
                ).utf8)
        ) { "id" }
        let overrides = try #require(prepared.template.fcmOverrides)
        let message = prepared.template.fcmMessage(
            variant: nil, badge: nil, now: 0, channelID: "news", overrides: overrides)
        let built = try message.template(checked: false)
        let text = String(
            decoding: built.body(for: try FCMTarget(token: String(repeating: "a", count: 40))), as: UTF8.self)
        #expect(text.contains(#""ttl":"60s""#))
        #expect(text.contains(#""priority":"NORMAL""#))
        #expect(text.contains(##""color":"#11aa22""##))
        #expect(text.contains(#""notification_count":2"#) && !text.contains(#""notification_count":2.0"#))
        #expect(text.contains(#""channel_id":"news""#))
        #expect(text.contains(#""k":"v""#))
    }
}
