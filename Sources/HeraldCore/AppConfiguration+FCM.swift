import Foundation

extension AppConfiguration {
    /// An app's FCM HTTP v1 credentials and settings (`"fcm"` in the apps file): its Android devices are sent to
    /// through FCM with the service account's access tokens (docs/fcm.md).
    public struct FCM: Sendable, Hashable, Codable {
        /// The service account key file (JSON, as the Firebase console exports it), relative to the apps file. The
        /// project id comes from it, and its `token_uri` is where access tokens are minted.
        public var serviceAccountFile: String
        /// An override of `https://fcm.googleapis.com` (a simulator, a proxy): `https://host[:port]`.
        public var endpoint: String?
        /// An extra trust root (PEM file) for `endpoint` and the token endpoint; verification is never switched off.
        public var caFile: String?
        /// The app's default notification channel (`android.notification.channel_id`); nil leaves the choice to the
        /// app's manifest default.
        public var channelID: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case serviceAccountFile = "service_account_file"
            case endpoint
            case caFile = "ca_file"
            case channelID = "channel_id"
        }

        public init(
            serviceAccountFile: String, endpoint: String? = nil, caFile: String? = nil, channelID: String? = nil
        ) {
            self.serviceAccountFile = serviceAccountFile
            self.endpoint = endpoint
            self.caFile = caFile
            self.channelID = channelID
        }

        /// Checks the fields that need no file: a service account file named, an https endpoint with a host, a
        /// channel id of printable characters.
        func check(app: String) throws(ConfigurationError) {
            guard !serviceAccountFile.isEmpty else {
                throw ConfigurationError("app \(app): fcm.service_account_file is empty")
            }
            if let endpoint {
                guard let components = URLComponents(string: endpoint), components.scheme == "https",
                    let host = components.host, !host.isEmpty, components.user == nil, components.password == nil,
                    components.path.isEmpty || components.path == "/", endpoint.utf8.count <= 2048
                else {
                    throw ConfigurationError(
                        "app \(app): fcm.endpoint must be https://host[:port] with no path or user info")
                }
            }
            if let channelID {
                guard (1...256).contains(channelID.utf8.count),
                    channelID.unicodeScalars.allSatisfy({ $0.value >= 0x20 })
                else {
                    throw ConfigurationError("app \(app): fcm.channel_id must be 1 to 256 printable characters")
                }
            }
        }

        /// The endpoint's host and port: FCM's unless overridden.
        public var hostAndPort: (host: String, port: Int) {
            guard let endpoint, let components = URLComponents(string: endpoint), let host = components.host else {
                return ("fcm.googleapis.com", 443)
            }
            return (host, components.port ?? 443)
        }
    }

    /// Whether a delivery reads more of each device's row than its token, platform and FCM kind: an app with Web
    /// Push credentials (a browser's subscription keys) or one serving several APNs environments (each device's
    /// environment). A page without details carries every device's platform and FCM kind, which is all an app with
    /// FCM needs to choose the provider when the payload is the same for every device.
    public var readsDeviceDetails: Bool { webpush != nil || sendsPerDeviceEnvironment }

    /// Whether a batch that lists its tokens looks them up in the store: an app with other providers than APNs
    /// (a listed token's registration says its platform and FCM kind, which its form alone may not) or one that
    /// reads details.
    public var readsListedDevices: Bool { fcm != nil || readsDeviceDetails }

    /// The FCM service account key's text, read from `fcm.service_account_file` (relative to `directory`).
    public func fcmServiceAccount(directory: String) throws(ConfigurationError) -> String? {
        guard let fcm else { return nil }
        return try AppsFile.read(
            fcm.serviceAccountFile, relativeTo: directory, what: "fcm.service_account_file of app \(id)")
    }

    /// The extra trust roots for the FCM endpoint and token endpoint.
    public func fcmTrustRootsPEM(directory: String) throws(ConfigurationError) -> [String] {
        guard let caFile = fcm?.caFile else { return [] }
        return [try AppsFile.read(caFile, relativeTo: directory, what: "fcm.ca_file of app \(id)")]
    }
}
