/// One message the simulator accepted (answered 201).
public struct WebPushSimulatorRecord: Sendable, Hashable {
    /// The subscription id from the path.
    public var subscriptionID: String
    /// The decrypted payload (without delimiter and padding); nil when the body did not decrypt (see
    /// ``decryptionFailure``) or when decryption was skipped for an id of
    /// ``WebPushSimulatorConfiguration/acceptAnyKeysForPrefixes``.
    public var plaintext: [UInt8]?
    /// Why the body did not decrypt; nil when it did, or when decryption was skipped. A real service answers 201 to
    /// such a body (it cannot decrypt) and the browser drops it: this is how tests see it.
    public var decryptionFailure: String?
    /// The body's size in bytes.
    public var bodySize: Int
    /// `TTL`.
    public var ttl: Int
    /// `Urgency`, if sent.
    public var urgency: String?
    /// `Topic`, if sent.
    public var topic: String?
    /// The VAPID JWT's `sub`.
    public var vapidSubject: String
    /// The VAPID JWT's `aud`.
    public var vapidAudience: String
    /// The VAPID JWT's `exp`, in seconds since 1970.
    public var vapidExpiry: Int64
    /// The SHA-256 of the JWT string in lower-case hex (the token itself is never kept).
    public var vapidTokenHash: String
    /// `k`: the VAPID public key, base64url.
    public var vapidPublicKey: String
    /// The message id in `Location`.
    public var messageID: String
    /// When the simulator accepted it, in seconds since 1970 (``WebPushSimulatorConfiguration/now``).
    public var receivedAt: Int64
    /// `HTTP/2` or `HTTP/1.1`.
    public var httpVersion: String

    /// The plaintext as UTF-8 text; nil without plaintext or when it is not UTF-8.
    public var text: String? {
        plaintext.flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// Creates a record.
    public init(
        subscriptionID: String, plaintext: [UInt8]?, decryptionFailure: String?, bodySize: Int, ttl: Int,
        urgency: String?, topic: String?, vapidSubject: String, vapidAudience: String, vapidExpiry: Int64,
        vapidTokenHash: String, vapidPublicKey: String, messageID: String, receivedAt: Int64, httpVersion: String
    ) {
        self.subscriptionID = subscriptionID
        self.plaintext = plaintext
        self.decryptionFailure = decryptionFailure
        self.bodySize = bodySize
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
        self.vapidSubject = vapidSubject
        self.vapidAudience = vapidAudience
        self.vapidExpiry = vapidExpiry
        self.vapidTokenHash = vapidTokenHash
        self.vapidPublicKey = vapidPublicKey
        self.messageID = messageID
        self.receivedAt = receivedAt
        self.httpVersion = httpVersion
    }
}
