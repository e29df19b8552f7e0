import HeraldTestSupport
import Testing
import WebPushCore

/// What the store reads back without checking (`WebPushEndpoint(trusted:)`, `WebPushKeys(trustedStored:)`) is what
/// the checked parse made of the same text when it was registered.
@Suite struct TrustedSubscriptionTests {
    @Test(arguments: [
        "https://fcm.googleapis.com/fcm/send/cX3f:APA91b-_x", "HTTPS://Updates.Push.Services.Mozilla.COM/wpush/v2/gAAA",
        "https://web.push.apple.com", "https://127.0.0.1:8443/push/1?x=1", "https://push.example:443?only=query",
        "https://push.example:0443/a", "https://push.example:+8443/a%2Fb", "https://a.b/path:with:colons",
    ])
    func aTrustedEndpointIsTheCheckedOne(url: String) throws {
        let checked = try WebPushEndpoint(url)
        let trusted = WebPushEndpoint(trusted: url)
        #expect(trusted == checked)
        #expect(trusted.origin == checked.origin && trusted.path == checked.path && trusted.port == checked.port)
    }

    @Test func trustedKeysAreTheCheckedOnes() throws {
        for (p256dh, auth) in [
            (WebSubscriptionFixtures.p256dh, WebSubscriptionFixtures.auth),
            (WebSubscriptionFixtures.otherP256dh, WebSubscriptionFixtures.otherAuth),
        ] {
            let keys = try WebPushKeys(p256dh: p256dh, auth: auth)
            #expect(WebPushKeys(trustedStored: keys.stored) == keys)
        }
        // Not the stored form: empty keys, which no encryption takes.
        #expect(WebPushKeys(trustedStored: "no-dot").p256dh.isEmpty)
        #expect(WebPushKeys(trustedStored: "a!.b").auth.isEmpty)
    }
}
