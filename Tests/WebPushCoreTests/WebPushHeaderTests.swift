import Crypto
import Testing

@testable import WebPushCore

@Suite("Web Push request headers: Topic, TTL, Urgency")
struct WebPushHeaderTests {
    static let topics: [(String, String?)] = [
        ("newEvent", nil),
        ("a", "4n+1"),
        ("ab", nil),
        ("score-Board_", nil),
        (String(repeating: "x", count: 32), nil),
        (String(repeating: "x", count: 33), "at most 32"),
        (String(repeating: "x", count: 29), "4n+1"),
        ("new_event", "4n+1"),  // Apple's BadWebPushTopic: 9 characters
        ("notification-test", "4n+1"),  // 17 characters
        ("", "empty"),
        ("new event", "only A-Z"),
        ("score=1", "only A-Z"),
        ("scöre", "only A-Z"),
    ]

    @Test("topics: at most 32 base64url characters, no length of 4n+1", arguments: topics)
    func topicRules(entry: (String, String?)) throws {
        if let rule = entry.1 {
            let error = #expect(throws: WebPushTopicError.self, "\(entry.0)") { try WebPushTopic(entry.0) }
            #expect(error?.description.contains(rule) == true, "\(entry.0): \(error?.description ?? "")")
        } else {
            #expect(try WebPushTopic(entry.0).value == entry.0)
        }
    }

    @Test("a valid collapse id is its own topic; any other becomes 32 characters of its hash")
    func derivedTopics() throws {
        #expect(WebPushTopic.derived(from: "newEvent").value == "newEvent")
        for collapseID in ["new_event", "match:1234 score", String(repeating: "x", count: 100), "é", ""] {
            let topic = WebPushTopic.derived(from: collapseID)
            #expect(topic.value.count == 32)
            #expect(try WebPushTopic(topic.value) == topic, "a derived topic passes the rules")
            let digest = Array(SHA256.hash(data: Array(collapseID.utf8)))
            #expect(topic.value == Base64URL.encode(digest.prefix(24)))
            #expect(WebPushTopic.derived(from: collapseID) == topic, "equal ids give equal topics")
        }
        #expect(WebPushTopic.derived(from: "new_event") != WebPushTopic.derived(from: "new_evenT"))
    }

    @Test("TTL is clamped to 0…4 weeks")
    func ttl() {
        #expect(WebPushTTL.maximum == 2_419_200)
        #expect(WebPushTTL.clamped(-5) == 0)
        #expect(WebPushTTL.clamped(0) == 0)
        #expect(WebPushTTL.clamped(3600) == 3600)
        #expect(WebPushTTL.clamped(Int64(2_419_201)) == 2_419_200)
        #expect(WebPushTTL.clamped(Int64.max) == 2_419_200)
        #expect(WebPushTTL.clamped(Int64.min) == 0)
    }

    @Test("urgency values are RFC 8030's")
    func urgency() {
        #expect(WebPushUrgency.allCases.map(\.headerValue) == ["very-low", "low", "normal", "high"])
        #expect(WebPushUrgency(rawValue: "very-low") == .veryLow)
    }
}
