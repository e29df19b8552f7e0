import APNSChannels
import APNSCore
import HeraldCore
import HeraldStore
import Logging
import NIOPosix

/// What the channel routes need of each app in the API's apps file, read once when the router is built: the
/// client configuration and the provider token cache, so that one token serves the app's requests for up to 50
/// minutes. An app whose settings cannot be read (a missing key file, certificate auth) keeps its error, which
/// its channel requests answer with.
final class ChannelSettings: Sendable {
    struct Entry: Sendable {
        var app: AppConfiguration
        var configuration: APNSChannelsConfiguration
        var providerTokens: ProviderTokenCache
    }

    private let byApp: [String: Result<Entry, ConfigurationError>]

    init(apps: AppsFile, directory: String) {
        var byApp: [String: Result<Entry, ConfigurationError>] = [:]
        for app in apps.apps {
            do throws(ConfigurationError) {
                let configuration = try APNSChannelsConfiguration(app: app, directory: directory)
                let tokens = try ProviderTokenCache.channels(app: app, directory: directory)
                byApp[app.id] = .success(Entry(app: app, configuration: configuration, providerTokens: tokens))
            } catch {
                byApp[app.id] = .failure(error)
            }
        }
        self.byApp = byApp
    }

    /// Runs `body` with a registry for `app` over a client of its own, shut down afterwards (channel requests are
    /// an operator's, a few a minute: a connection each costs less than keeping one per app open).
    func withRegistry<T: Sendable>(
        app: String, store: Store, logger: Logger, _ body: (ChannelRegistry) async throws -> T
    ) async throws -> T {
        guard let entry = byApp[app] else {
            throw APIError.notFound("app \(app) is not in the API's apps file")
        }
        let settings: Entry
        switch entry {
        case .success(let value): settings = value
        case .failure(let error):
            throw APIError(.serviceUnavailable, code: "channels_unavailable", error.message)
        }
        let client = APNSChannelsClient(
            configuration: settings.configuration, providerTokens: settings.providerTokens,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        do {
            let result = try await body(ChannelRegistry(app: settings.app, store: store, client: client))
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
