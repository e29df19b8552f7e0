import Testing

@testable import WebPushCore

@Suite("Web Push subscriptions")
struct WebPushSubscriptionTests {
    // RFC 8291 appendix A: the user agent's public key and authentication secret.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"

    @Test("a browser's subscription is taken, its origin and path split out")
    func accepted() throws {
        let subscription = try WebPushSubscription(
            endpoint: "https://Updates.Push.Services.Mozilla.com/wpush/v2/gAAAAAB?x=1", p256dh: Self.p256dh,
            auth: Self.auth, expirationTime: 1_800_000_000_000)
        #expect(subscription.endpoint.origin == "https://updates.push.services.mozilla.com")
        #expect(subscription.endpoint.path == "/wpush/v2/gAAAAAB?x=1")
        #expect(subscription.endpoint.port == 443)
        #expect(subscription.keys.p256dh.count == 65)
        #expect(subscription.keys.auth.count == 16)
        #expect(try WebPushKeys(stored: subscription.keys.stored) == subscription.keys)
        let other = try WebPushEndpoint("https://127.0.0.1:8443")
        #expect(other.origin == "https://127.0.0.1:8443")
        #expect(other.path == "/")
    }

    @Test("the description never shows the endpoint in full")
    func redacted() throws {
        let endpoint = try WebPushEndpoint("https://web.push.apple.com/QGuQyavXutnMfsecretsecretABCD")
        #expect(!"\(endpoint)".contains("secretsecret"))
        #expect("\(endpoint)" == "https://web.push.apple.com/…ABCD")
    }

    @Test(
        "a bad endpoint is refused with the rule it breaks",
        arguments: [
            ("", "empty"), ("http://push.example/x", "https"), ("https://", "https"),
            ("https://user@push.example/x", "user information"), ("https://push.example/x#f", "fragment"),
            ("https://push.example:0/x", "port"), ("https://push.example:99999/x", "port"),
            ("https://push example/x", "space"), ("https://pu$h.example/x", "host"),
            ("https://push.example/" + String(repeating: "a", count: 2048), "2048"),
        ])
    func badEndpoint(url: String, rule: String) {
        #expect {
            _ = try WebPushEndpoint(url)
        } throws: { error in
            "\(error)".contains(rule) && (url.count < 12 || !"\(error)".contains(url))
        }
    }

    @Test("bad keys are refused: not base64url, wrong lengths, not a P-256 point")
    func badKeys() {
        #expect(throws: WebPushSubscriptionError.self) { try WebPushKeys(p256dh: "!!", auth: Self.auth) }
        #expect(throws: WebPushSubscriptionError.self) { try WebPushKeys(p256dh: Self.auth, auth: Self.auth) }
        #expect(throws: WebPushSubscriptionError.self) { try WebPushKeys(p256dh: Self.p256dh, auth: Self.p256dh) }
        var offCurve = Base64URL.decode(Self.p256dh)!
        offCurve[64] ^= 0x01
        #expect(throws: WebPushSubscriptionError.self) {
            try WebPushKeys(p256dh: offCurve, auth: Base64URL.decode(Self.auth)!)
        }
        #expect(throws: WebPushSubscriptionError.self) {
            try WebPushSubscription(
                endpoint: "https://push.example/x", p256dh: Self.p256dh, auth: Self.auth, expirationTime: -1)
        }
        #expect((try? WebPushKeys(p256dh: Self.p256dh + "=", auth: Self.auth + "==")) != nil)
    }
}
