import APNSChannels
import HeraldCore
import Logging
import NIOCore
import Synchronization

/// One channel client per app, made when the app first broadcasts; shut down with the worker. An app whose entry
/// changed (a SIGHUP reload: a rotated key, another host) gets a new client; the old one is shut down with the
/// worker, so a broadcast in flight on it finishes.
final class BroadcastClients: Sendable {
    private let clients = Mutex<
        (current: [String: (AppConfiguration, APNSChannelsClient)], retired: [APNSChannelsClient])
    >(
        ([:], []))
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    init(eventLoopGroup: any EventLoopGroup, logger: Logger) {
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    func client(for app: AppConfiguration, directory: String) throws(ConfigurationError) -> APNSChannelsClient {
        let result: Result<APNSChannelsClient, ConfigurationError> = clients.withLock { clients in
            if let (configured, client) = clients.current[app.id], configured == app { return .success(client) }
            do throws(ConfigurationError) {
                let client = try APNSChannelsClient(
                    app: app, directory: directory, eventLoopGroup: eventLoopGroup, logger: logger)
                if let (_, old) = clients.current.updateValue((app, client), forKey: app.id) {
                    clients.retired.append(old)
                }
                return .success(client)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = ([:], []) }
            return clients.current.values.map(\.1) + clients.retired
        }
        for client in all { await client.shutdown() }
    }
}
