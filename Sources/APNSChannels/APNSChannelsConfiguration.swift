/// Where an app's channel management and broadcast requests go, and whom they trust.
///
/// Apple's hosts: channel management at `api-manage-broadcast.sandbox.push.apple.com:2195` (development) and
/// `api-manage-broadcast.push.apple.com:2196` (production); broadcast sends at a host the app's settings name
/// (Apple's examples and its prose disagree, see docs/live-activities.md).
public struct APNSChannelsConfiguration: Sendable {
    /// The app's bundle id: the `<bundle>` of every path, and the topic of broadcasts (with
    /// `.push-type.liveactivity`).
    public var bundleID: String
    /// The channel management host.
    public var managementHost: String
    /// The channel management port.
    public var managementPort: Int
    /// The broadcast host (`POST /4/broadcasts/apps/<bundle>`).
    public var broadcastHost: String
    /// The broadcast port.
    public var broadcastPort: Int
    /// Extra trust roots (PEM) beside the system's, e.g. a test CA; certificate verification is never switched off.
    public var additionalTrustRootsPEM: [String]
    /// The longest a request may take, from sending it to the end of its answer.
    public var requestTimeout: Duration = .seconds(10)
    /// The longest a new connection may take to open (TCP and TLS).
    public var connectTimeout: Duration = .seconds(5)
    /// The largest answer body read, in bytes; APNs' answers are a few hundred bytes, a full channel list about
    /// 10,000 ids of some 30 bytes each.
    public var maximumResponseBytes: Int = 1 << 20

    public init(
        bundleID: String, managementHost: String, managementPort: Int, broadcastHost: String, broadcastPort: Int,
        additionalTrustRootsPEM: [String] = []
    ) {
        self.bundleID = bundleID
        self.managementHost = managementHost
        self.managementPort = managementPort
        self.broadcastHost = broadcastHost
        self.broadcastPort = broadcastPort
        self.additionalTrustRootsPEM = additionalTrustRootsPEM
    }

    /// Apple's channel management host and port for an environment (`production` or the sandbox).
    public static func appleManagementEndpoint(production: Bool) -> (host: String, port: Int) {
        production
            ? ("api-manage-broadcast.push.apple.com", 2196) : ("api-manage-broadcast.sandbox.push.apple.com", 2195)
    }
}

/// A channel's message storage policy, fixed when the channel is created (APNs cannot change it).
public enum ChannelStoragePolicy: Int, Sendable, Hashable, CaseIterable {
    /// No message stored: a device that is offline misses the update; allows a higher publishing budget. Broadcasts
    /// on such a channel must carry `apns-expiration: 0`.
    case noStorage = 0
    /// The most recent message is stored (up to eight hours, less with `apns-expiration`).
    case mostRecent = 1
}
