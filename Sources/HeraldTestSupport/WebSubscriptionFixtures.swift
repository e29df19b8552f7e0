import WebPushCore

/// Web Push subscriptions for tests: endpoints at a few push services' origins, and real keys (RFC 8291 appendix A's
/// user agent and application server public keys, both points on P-256, with two secrets).
public enum WebSubscriptionFixtures {
    /// RFC 8291 appendix A: the user agent's public key.
    public static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    /// RFC 8291 appendix A: the user agent's authentication secret.
    public static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    /// RFC 8291 appendix A: the application server's public key, another point on the curve.
    public static let otherP256dh =
        "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    /// Sixteen bytes 0x00 … 0x0f.
    public static let otherAuth = "AAECAwQFBgcICQoLDA0ODw"

    /// An endpoint at one of three services, told apart by `n` (its last characters).
    public static func endpoint(_ n: Int, service: Int? = nil) -> String {
        let origins = [
            "https://fcm.googleapis.com/fcm/send/", "https://updates.push.services.mozilla.com/wpush/v2/",
            "https://web.push.apple.com/",
        ]
        return origins[(service ?? n) % origins.count] + "dGVzdC1zdWJzY3JpcHRpb24tZm9yLWhlcmFsZA-\(n)"
    }

    /// A subscription at `endpoint(n)`, with the first keys or, with `other`, the second.
    public static func subscription(_ n: Int, other: Bool = false, expirationTime: Int64? = nil)
        -> WebPushSubscription
    {
        // The fixtures are valid: a failure here is a broken fixture.
        try! WebPushSubscription(
            endpoint: endpoint(n), p256dh: other ? otherP256dh : p256dh, auth: other ? otherAuth : auth,
            expirationTime: expirationTime)
    }
}
