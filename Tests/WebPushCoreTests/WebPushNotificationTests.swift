import Foundation
import Testing

@testable import WebPushCore

@Suite("Web Push payloads")
struct WebPushNotificationTests {
    static func parse(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static let awkward: [String] = [
        "plain",
        "quote \" and backslash \\ and slash /",
        "new\nline\r\ttab\u{08}\u{0C}",
        "nul \u{00} and \u{01}\u{1F} and DEL \u{7F}",
        "line separators \u{2028} \u{2029}",
        "emoji 🍉 and accents é ñ 漢字",
        "\\u0041 stays text",
        "",
    ]

    @Test("strings are escaped so that a JSON parser reads them back unchanged", arguments: awkward)
    func escaping(text: String) throws {
        let json = JSONWriter.quoted(text)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String
        #expect(parsed == text)
        #expect(!json.utf8.dropFirst().dropLast().contains(where: { $0 < 0x20 }), "no raw control characters")
    }

    @Test("the service-worker form holds the fields set and omits the others")
    func serviceWorkerForm() throws {
        let notification = WebPushNotification(
            title: "Score \"update\"", body: "2–1\nfull time", tag: "match-7", lang: "en",
            icon: "https://x.example/i.png",
            badge: 3, data: Array(#"{"match":7,"teams":["a","b"]}"#.utf8))
        let bytes = notification.json(declarative: false)
        let object = try Self.parse(bytes)
        #expect(object["title"] as? String == "Score \"update\"")
        #expect(object["body"] as? String == "2–1\nfull time")
        #expect(object["tag"] as? String == "match-7")
        #expect(object["lang"] as? String == "en")
        #expect(object["icon"] as? String == "https://x.example/i.png")
        #expect((object["badge"] as? NSNumber)?.intValue == 3)
        let data = try #require(object["data"] as? [String: Any])
        #expect((data["match"] as? NSNumber)?.intValue == 7)
        #expect(Set(object.keys) == ["title", "body", "tag", "lang", "icon", "badge", "data"])
        #expect(
            String(decoding: WebPushNotification(body: "x").json(declarative: false), as: UTF8.self)
                == #"{"body":"x"}"#)
        #expect(String(decoding: WebPushNotification().json(declarative: false), as: UTF8.self) == "{}")
        #expect(String(decoding: WebPushNotification(data: []).json(declarative: false), as: UTF8.self) == "{}")
    }

    @Test("the declarative form has web_push 8030, the notification, app_badge and mutable")
    func declarativeForm() throws {
        let notification = WebPushNotification(
            title: "Hi", body: "there", tag: "t", lang: "fr", navigate: "https://app.example.com/inbox?m=1",
            icon: "https://app.example.com/i.png", silent: true, badge: 0, data: Array(#"{"k":"v"}"#.utf8))
        #expect(notification.declarativeProblem() == nil)
        let bytes = notification.json(declarative: true)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"web_push":8030,"notification":{"title":"Hi","#))
        let object = try Self.parse(bytes)
        #expect((object["web_push"] as? NSNumber)?.intValue == 8030)
        #expect((object["app_badge"] as? NSNumber)?.intValue == 0)
        #expect(object["mutable"] as? Bool == true)
        let inner = try #require(object["notification"] as? [String: Any])
        #expect(inner["title"] as? String == "Hi")
        #expect(inner["navigate"] as? String == "https://app.example.com/inbox?m=1")
        #expect(inner["body"] as? String == "there")
        #expect(inner["silent"] as? Bool == true)
        #expect((inner["data"] as? [String: Any])?["k"] as? String == "v")
        #expect(Set(inner.keys) == ["title", "navigate", "body", "tag", "lang", "icon", "silent", "data"])
        #expect(Set(object.keys) == ["web_push", "notification", "app_badge", "mutable"])
    }

    static let problems: [(WebPushNotification, String)] = [
        (WebPushNotification(body: "x", navigate: "https://a.example"), "title"),
        (WebPushNotification(title: "", navigate: "https://a.example"), "title"),
        (WebPushNotification(title: "t"), "navigate"),
        (WebPushNotification(title: "t", navigate: "http://a.example"), "https"),
        (WebPushNotification(title: "t", navigate: "/inbox"), "https"),
        (WebPushNotification(title: "t", navigate: "https://a.example/x", badge: -1), "badge"),
    ]

    @Test(
        "declarative needs a title and an https navigate; without them the service-worker form is written",
        arguments: problems)
    func declarativeProblems(entry: (WebPushNotification, String)) throws {
        let problem = try #require(entry.0.declarativeProblem())
        #expect(problem.contains(entry.1), "\(problem)")
        #expect(entry.0.json(declarative: true) == entry.0.json(declarative: false))
        #expect(try Self.parse(entry.0.json(declarative: true))["web_push"] == nil)
    }
}
