import APNSCore
import WebPushCore

extension DeviceFields {
    /// The names a source gives the parts of a web subscription, for its sentences: the API's JSON paths
    /// (`subscription.endpoint`, `subscription.keys.p256dh`, …) or the CSV's columns (`token`, `p256dh`, …).
    public struct WebSubscriptionNames: Sendable, Hashable {
        public var endpoint: String
        public var p256dh: String
        public var auth: String
        public var expirationTime: String

        public init(endpoint: String, p256dh: String, auth: String, expirationTime: String) {
            self.endpoint = endpoint
            self.p256dh = p256dh
            self.auth = auth
            self.expirationTime = expirationTime
        }

        /// The fields of `PushSubscription.toJSON()` under the registration's `subscription`.
        public static let api = WebSubscriptionNames(
            endpoint: "subscription.endpoint", p256dh: "subscription.keys.p256dh", auth: "subscription.keys.auth",
            expirationTime: "subscription.expirationTime")
        /// The devices CSV's columns.
        public static let csv = WebSubscriptionNames(
            endpoint: "token", p256dh: "p256dh", auth: "auth", expirationTime: "expiration_time")
    }

    /// Validates a Push API subscription as a web device registers it (API, CSV and JSON Lines imports alike): an
    /// https endpoint of at most 2,048 bytes (`WebPushEndpoint`) at a host name or IPv4 address, `p256dh` a P-256 point and `auth` 16 bytes in
    /// base64url, `expirationTime` milliseconds since 1970 or nil. The sentence names the field (as `names` calls
    /// it) and the rule, never the endpoint or a key.
    public static func webSubscription(
        endpoint: String, p256dh: String, auth: String, expirationTime: Int64?, names: WebSubscriptionNames
    ) throws(JobError) -> WebPushSubscription {
        let parsed: WebPushEndpoint
        do {
            parsed = try WebPushEndpoint(endpoint)
        } catch {
            throw JobError(.invalidTarget, "\(names.endpoint): \(error.description)")
        }
        // Push services' endpoints are at host names: an IPv6 literal (which WebPushEndpoint reads) is not taken,
        // so that every registered origin is a plain `https://host[:port]`.
        guard !parsed.host.hasPrefix("[") else {
            throw JobError(
                .invalidTarget, "\(names.endpoint): the endpoint's host must be a host name or an IPv4 address")
        }
        do {
            _ = try WebPushKeys(p256dh: p256dh, auth: auth)
        } catch {
            let sentence = error.description.replacingOccurrences(of: "keys.p256dh", with: names.p256dh)
                .replacingOccurrences(of: "keys.auth", with: names.auth)
            throw JobError(.invalidTarget, sentence)
        }
        if let expirationTime, !(0...WebPushSubscription.latestExpiration).contains(expirationTime) {
            throw JobError(
                .invalidTarget,
                "\(names.expirationTime) must be milliseconds since 1970, 0 to \(WebPushSubscription.latestExpiration)"
                    + " (or null)")
        }
        do {
            return try WebPushSubscription(
                endpoint: endpoint, p256dh: p256dh, auth: auth, expirationTime: expirationTime)
        } catch {
            throw JobError(.invalidTarget, error.description)
        }
    }

    /// Whether `text` reads as a web subscription's endpoint (an https URL by `WebPushEndpoint`'s rules): the token
    /// a path names a web device by (percent-encoded as one segment).
    public static func webToken(_ text: String) -> DeviceToken? {
        guard text.utf8.count > 8, text.utf8.prefix(8).map({ $0 | 0x20 }) == Array("https://".utf8) else {
            return nil
        }
        guard let endpoint = try? WebPushEndpoint(text), !endpoint.host.hasPrefix("[") else { return nil }
        return DeviceToken(trustedHex: endpoint.url)
    }
}
