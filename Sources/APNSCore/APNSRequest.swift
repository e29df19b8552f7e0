/// One notification to one device, ready to send: the `:path` token, the `apns-*` headers and the JSON body.
public struct APNSRequest: Sendable, Hashable {
    /// The device to send to.
    public var deviceToken: DeviceToken
    /// `apns-topic`: the bundle id with the push type's suffix.
    public var topic: String
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-priority`; nil leaves APNs' default (10).
    public var priority: Priority?
    /// `apns-expiration` in UNIX seconds; nil leaves APNs' storage policy, 0 means deliver once or never.
    public var expiration: Int64?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// `apns-id`; nil lets APNs generate one.
    public var apnsID: APNSID?
    /// The JSON payload (`aps` and custom keys), uncompressed.
    public var payload: [UInt8]

    public init(
        deviceToken: DeviceToken,
        topic: String,
        pushType: PushType = .alert,
        priority: Priority? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        apnsID: APNSID? = nil,
        payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// The `:path` of the request.
    public var path: String { "/3/device/" + deviceToken.hex }
}
