/// A Push API subscription (`PushSubscription.toJSON()`): where to send (`endpoint`, a capability URL at the
/// browser's push service) and the keys to encrypt for (`keys.p256dh`, `keys.auth`), with the time the browser says
/// it expires, if any. Validated on the way in; `description` never shows the endpoint in full (whoever holds it
/// can send).
public struct WebPushSubscription: Sendable, Hashable, CustomStringConvertible {
    /// Where messages for this subscription are posted.
    public let endpoint: WebPushEndpoint
    /// The keys the subscription's messages are encrypted for.
    public let keys: WebPushKeys
    /// Milliseconds since 1970 after which the push service drops the subscription (`expirationTime`), if it said.
    public let expirationTime: Int64?

    /// Validates a subscription's parts as the browser hands them over: the endpoint URL, `p256dh` and `auth` in
    /// unpadded base64url, and `expirationTime` in milliseconds since 1970 (nil when the browser sends `null`).
    public init(endpoint: String, p256dh: String, auth: String, expirationTime: Int64? = nil)
        throws(WebPushSubscriptionError)
    {
        self.endpoint = try WebPushEndpoint(endpoint)
        self.keys = try WebPushKeys(p256dh: p256dh, auth: auth)
        if let expirationTime, expirationTime < 0 || expirationTime > WebPushSubscription.latestExpiration {
            throw WebPushSubscriptionError(
                "expirationTime must be milliseconds since 1970, 0 to \(WebPushSubscription.latestExpiration)")
        }
        self.expirationTime = expirationTime
    }

    /// A subscription whose parts were validated before (read back from the store).
    public init(endpoint: WebPushEndpoint, keys: WebPushKeys, expirationTime: Int64?) {
        self.endpoint = endpoint
        self.keys = keys
        self.expirationTime = expirationTime
    }

    /// The latest `expirationTime` taken: the year 9999, PostgreSQL's and JavaScript's comfortable range.
    public static let latestExpiration: Int64 = 253_402_300_799_000

    public var description: String { "subscription at \(endpoint)" }
}

/// A subscription's endpoint: an absolute `https` URL without user information or fragment, at most 2,048 bytes
/// (every push service's endpoints are a few hundred). Kept exactly as given (Mozilla: store it whole; WNS: keep its
/// `%`-encoding); `origin` keys connections and VAPID tokens, `path` is the request's `:path`.
public struct WebPushEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given.
    public let url: String
    /// `https://host[:port]`, lowercase host, the port only when it is not 443: a VAPID token's `aud`.
    public let origin: String
    /// The host, lowercase (an IPv6 literal keeps its brackets).
    public let host: String
    /// The port (443 unless the URL names another).
    public let port: Int
    /// The path and query (`/` when the URL has no path): the request's `:path`.
    public let path: String

    /// The longest endpoint taken, in bytes.
    public static let maximumLength = 2048

    /// Parses and checks `url`. The error names the rule broken, never the URL.
    public init(_ url: String) throws(WebPushSubscriptionError) {
        guard !url.isEmpty else { throw WebPushSubscriptionError("the endpoint is empty") }
        guard url.utf8.count <= Self.maximumLength else {
            throw WebPushSubscriptionError("the endpoint is \(url.utf8.count) bytes; at most \(Self.maximumLength)")
        }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw WebPushSubscriptionError(
                "the endpoint holds a space, a control character or a non-ASCII character; an endpoint is a URL")
        }
        let prefix = "https://"
        guard url.utf8.count > prefix.utf8.count, url.lowercased().hasPrefix(prefix) else {
            throw WebPushSubscriptionError("the endpoint must be an https URL")
        }
        let rest = url.dropFirst(prefix.count)
        guard !rest.contains("#") else { throw WebPushSubscriptionError("the endpoint must not have a fragment") }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        guard !authority.contains("@") else {
            throw WebPushSubscriptionError("the endpoint must not carry user information")
        }
        var host = Substring(authority)
        var port = 443
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let digits = authority[authority.index(after: colon)...]
            guard let number = Int(digits), (1...65535).contains(number), digits.allSatisfy(\.isASCII) else {
                throw WebPushSubscriptionError("the endpoint's port must be a number from 1 to 65535")
            }
            port = number
            host = authority[authority.startIndex..<colon]
        }
        guard !host.isEmpty, host.count <= 253,
            host.hasPrefix("[")
                ? host.hasSuffix("]") && host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" })
                : host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." })
        else {
            throw WebPushSubscriptionError("the endpoint's host is not a host name or IP address")
        }
        let pathPart = rest[authorityEnd...]
        self.url = url
        self.host = host.lowercased()
        self.port = port
        self.origin = "https://" + self.host + (port == 443 ? "" : ":\(port)")
        self.path = pathPart.isEmpty ? "/" : (pathPart.hasPrefix("?") ? "/" + pathPart : String(pathPart))
    }

    /// The origin and the last four characters: enough to tell endpoints apart in a log, not enough to send.
    public var redacted: String { origin + "/…" + url.suffix(4) }

    public var description: String { redacted }
}

/// A subscription's keys: the browser's P-256 public key (`p256dh`, 65 bytes uncompressed) and its 16-byte
/// authentication secret (`auth`).
public struct WebPushKeys: Sendable, Hashable {
    /// The uncompressed P-256 point `0x04 ‖ X ‖ Y`.
    public let p256dh: [UInt8]
    /// The authentication secret.
    public let auth: [UInt8]

    /// Decodes and checks both keys from unpadded base64url (padding is tolerated, as some browsers' polyfills add
    /// it).
    public init(p256dh: String, auth: String) throws(WebPushSubscriptionError) {
        guard let key = Base64URL.decode(Self.unpadded(p256dh)) else {
            throw WebPushSubscriptionError("keys.p256dh is not base64url")
        }
        guard key.count == 65, key.first == 0x04 else {
            throw WebPushSubscriptionError(
                "keys.p256dh is \(key.count) bytes; it must be an uncompressed P-256 public key (65 bytes, 0x04 first)")
        }
        guard let secret = Base64URL.decode(Self.unpadded(auth)) else {
            throw WebPushSubscriptionError("keys.auth is not base64url")
        }
        guard secret.count == 16 else {
            throw WebPushSubscriptionError("keys.auth is \(secret.count) bytes; it must be 16")
        }
        try self.init(p256dh: key, auth: secret)
    }

    /// Checks raw keys: `p256dh` must be a point on P-256.
    public init(p256dh: [UInt8], auth: [UInt8]) throws(WebPushSubscriptionError) {
        guard p256dh.count == 65, p256dh.first == 0x04, auth.count == 16 else {
            throw WebPushSubscriptionError("keys.p256dh must be 65 bytes (0x04 first) and keys.auth 16 bytes")
        }
        guard WebPushKeys.isP256Point(p256dh) else {
            throw WebPushSubscriptionError("keys.p256dh is not a point on the P-256 curve")
        }
        self.p256dh = p256dh
        self.auth = auth
    }

    /// The keys as the store keeps them: `<p256dh>.<auth>`, each in unpadded base64url.
    public var stored: String { Base64URL.encode(p256dh) + "." + Base64URL.encode(auth) }

    /// Reads `stored` back.
    public init(stored: String) throws(WebPushSubscriptionError) {
        let parts = stored.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw WebPushSubscriptionError("stored keys are not <p256dh>.<auth>") }
        try self.init(p256dh: String(parts[0]), auth: String(parts[1]))
    }

    private static func unpadded(_ text: String) -> Substring {
        var text = Substring(text)
        while text.hasSuffix("=") { text = text.dropLast() }
        return text
    }
}

/// A subscription that breaks a rule; the message names the rule, never the endpoint or a key.
public struct WebPushSubscriptionError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    package init(_ description: String) { self.description = description }
}
