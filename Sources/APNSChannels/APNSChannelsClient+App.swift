import APNSCore
import Foundation
import HeraldCore
import Logging
import NIOCore

// Building a channel client from the apps file: hosts from `live_activities`, the token key from `auth.key_file`,
// the extra trust root from `ca_file`, relative paths resolved against the apps file's directory (as
// `APNSClients` does for the ordinary sends).

extension APNSChannelsConfiguration {
    /// The configuration of `app`: channel management at `live_activities.channels_endpoint` (else Apple's host
    /// for the app's environment), broadcasts at `live_activities.broadcast_endpoint` (else the app's endpoint),
    /// trusting the system roots and the app's `ca_file`.
    public init(app: AppConfiguration, directory: String) throws(ConfigurationError) {
        let management = try app.channelsEndpoint()
        let broadcast = try app.broadcastEndpoint()
        let roots = try app.trustRootsPEM(directory: directory)
        self.init(
            bundleID: app.topic, managementHost: management.host, managementPort: management.port,
            broadcastHost: broadcast.host, broadcastPort: broadcast.port, additionalTrustRootsPEM: roots)
    }
}

extension ProviderTokenCache {
    /// A token cache for `app`'s key (`auth.type` token). Channels take provider tokens only: a certificate app
    /// is refused with a message that says so.
    public static func channels(app: AppConfiguration, directory: String) throws(ConfigurationError)
        -> ProviderTokenCache
    {
        guard let tokens = try app.providerTokens(directory: directory) else {
            throw ConfigurationError(
                "app \(app.id): broadcast channels need a token key (auth.type token); the app uses a certificate")
        }
        return tokens
    }
}

extension APNSChannelsClient {
    /// A client for `app` as the apps file describes it, with a token cache of its own. Relative paths are resolved
    /// against `directory` (the apps file's). Fails, naming the app and the file, when a file cannot be read, the
    /// key is not a P-256 key, an endpoint is not an https URL or the app uses certificate auth.
    public convenience init(
        app: AppConfiguration, directory: String, eventLoopGroup: any EventLoopGroup, logger: Logger
    ) throws(ConfigurationError) {
        let configuration = try APNSChannelsConfiguration(app: app, directory: directory)
        let tokens = try ProviderTokenCache.channels(app: app, directory: directory)
        self.init(configuration: configuration, providerTokens: tokens, eventLoopGroup: eventLoopGroup, logger: logger)
    }
}
