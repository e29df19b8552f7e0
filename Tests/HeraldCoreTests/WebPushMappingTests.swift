import APNSCore
import Foundation
import HeraldCore
import Testing
import WebPushCore

/// A job as a browser gets it (docs/webpush.md, "What a browser gets") and what each push service answer means
/// (WebPushSettlementTable).
@Suite struct WebPushMappingTests {
    static func template(_ notification: String) throws -> NotificationTemplate {
        let body = #"{"id":"j","app":"a","target":{"all":true},"notification":\#(notification)}"#
        return try PreparedJob.decode(Array(body.utf8)) { "j" }.template
    }

    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func theNeutralPartsBecomeWhatAServiceWorkerReads() throws {
        let template = try Self.template(
            #"{"aps":{"alert":{"title":"Goal","body":"2–1"},"badge":3},"custom":{"match":42,"s":"t"},"collapse_id":"scores","priority":5,"expiration":1060,"localizations":{"fr":{"title":"But","body":"2–1"}}}"#
        )
        let plain = try Self.object(
            template.webPushNotification(variant: nil, badge: nil, navigate: nil).json(declarative: false))
        #expect(plain["title"] as? String == "Goal")
        #expect(plain["body"] as? String == "2–1")
        #expect(plain["tag"] as? String == "scores")
        #expect(plain["badge"] as? Int == 3)
        #expect((plain["data"] as? [String: Any])?["match"] as? Int == 42, "custom data keeps its JSON types")
        let french = try Self.object(
            template.webPushNotification(variant: "fr", badge: 9, navigate: nil).json(declarative: false))
        #expect(french["title"] as? String == "But")
        #expect(french["lang"] as? String == "fr")
        #expect(french["badge"] as? Int == 9)
        #expect(template.webPushUrgency == .normal)
        #expect(template.webPushTTL(now: 1000) == 60)
        #expect(template.webPushTopic?.value == "scores")
    }

    @Test func declarativeWebPushCarriesTheTitleAndWhereToGo() throws {
        let template = try Self.template(#"{"aps":{"alert":{"title":"Goal","body":"2–1"}}}"#)
        let notification = template.webPushNotification(
            variant: nil, badge: nil, navigate: "https://news.example/match/42")
        let declarative = try Self.object(notification.json(declarative: true))
        #expect(declarative["web_push"] as? Int == 8030)
        let shown = try #require(declarative["notification"] as? [String: Any])
        #expect(shown["title"] as? String == "Goal")
        #expect(shown["navigate"] as? String == "https://news.example/match/42")
        #expect(template.webPushUrgency == .high, "an alert without a priority is sent at 10: high")
        #expect(template.webPushTTL(now: 0) == WebPushTTL.maximum, "no expiration: four weeks")
    }

    @Test func aBackgroundPushIsDataOnlyAndLowUrgency() throws {
        let template = try Self.template(
            #"{"push_type":"background","aps":{"content-available":1},"custom":{"k":"v"},"expiration":0}"#)
        #expect(template.reachesWeb)
        let object = try Self.object(
            template.webPushNotification(variant: nil, badge: nil, navigate: nil).json(declarative: false))
        #expect(object["title"] == nil && object["body"] == nil)
        #expect((object["data"] as? [String: String]) == ["k": "v"])
        #expect(template.webPushUrgency == .low)
        #expect(template.webPushTTL(now: 5) == 0, "expiration 0 is now or never")
        let voip = try Self.template(#"{"push_type":"voip","aps":{}}"#)
        #expect(!voip.reachesWeb)
    }

    @Test(
        "each push service answer gets its verdict",
        arguments: [
            (201, nil, Verdict.delivered), (404, nil, .prune), (410, nil, .prune), (413, nil, .failDevice),
            (400, nil, .failDevice), (401, nil, .failJob), (403, nil, .failJob), (429, "30", .transient),
            (503, "30", .transient), (500, nil, .transient), (502, nil, .transient), (406, "120", .transient),
            (406, nil, .failDevice), (405, nil, .failDevice),
        ] as [(Int, String?, Verdict)])
    func verdicts(status: Int, retryAfter: String?, verdict: Verdict) {
        let answer = ProviderAnswer(
            WebPushAnswer(
                status: status, retryAfter: retryAfter, body: Array(#"{"reason":"BadJwtToken"}"#.utf8), now: 0))
        #expect(WebPushSettlementTable().verdict(on: answer) == verdict)
        if status != 201 { #expect(answer.reason?.rawValue.contains("BadJwtToken") == true) }
        if let retryAfter, let seconds = Int64(retryAfter) { #expect(answer.retryAfter == .seconds(seconds)) }
    }

    @Test func aJobsWebPushBlockIsReadByTheRuleItsSchemaStates() throws {
        let schema =
            try JSONSerialization.jsonObject(with: Data(contentsOf: FCMJobBlockTests.schemaURL)) as? [String: Any]
        let notification = (schema?["properties"] as? [String: Any])?["notification"] as? [String: Any]
        let block = ((notification?["properties"] as? [String: Any])?["webpush"] as? [String: Any])?["anyOf"] as? [Any]
        let navigate = ((block?[1] as? [String: Any])?["properties"] as? [String: Any])?["navigate"] as? [String: Any]
        let published = ((navigate?["anyOf"] as? [Any])?[1] as? [String: Any])?["pattern"] as? String
        #expect(published == WebPushNavigation.pattern)

        let template = try Self.template(
            #"{"aps":{"alert":{"title":"Goal"}},"webpush":{"declarative":true,"navigate":"https://news.example:8443/m?id=42"}}"#
        )
        #expect(template.webPushDeclarative == true)
        #expect(template.webPushNavigate == "https://news.example:8443/m?id=42")
        for bad in [
            #"{"navigate":"http://news.example/"}"#, #"{"navigate":"https://news.example/a b"}"#,
            #"{"navigate":"https://news.example:123456/"}"#, #"{"declarative":"yes"}"#, #"{"icon":"x"}"#,
        ] {
            #expect(throws: JobError.self) { try Self.template(#"{"aps":{"alert":"x"},"webpush":\#(bad)}"#) }
        }
    }
}
