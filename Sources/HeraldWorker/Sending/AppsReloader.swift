import Foundation
import HeraldCore
import Logging
import ServiceLifecycle
import UnixSignals

/// Rereads the apps file and gives it to the APNs clients: what SIGHUP does to a running worker. New and changed
/// apps (rotated keys and certificates included) take effect for work that starts afterwards; the clients they
/// replace are shut down once the work in flight on them is done. A file that cannot be read or parsed, or an app
/// whose key, certificate or CA cannot be loaded, is refused with a logged sentence and the apps in use are kept.
///
/// What the apps file also drives but a reload does not change until a restart: the webhooks bound at start-up
/// and the record of which apps have events.
public struct AppsReloader: Sendable {
    /// The apps file's path.
    public let path: String
    let clients: APNSClients
    let logger: Logger

    public init(path: String, clients: APNSClients, logger: Logger) {
        self.path = path
        self.clients = clients
        self.logger = logger
    }

    /// Reloads the apps file; the error, if any, is also logged, and the apps in use are then kept.
    public func reload(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) {
        do throws(ConfigurationError) {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError("cannot read the apps file \(path)")
            }
            let apps = try AppsFile.parse(data, path: path)
            let directory = (path as NSString).deletingLastPathComponent
            try clients.reload(apps, directory: directory.isEmpty ? "." : directory, environment: environment)
            logger.notice(
                "apps file reloaded",
                metadata: ["file": "\(path)", "apps": "\(apps.apps.map(\.id).joined(separator: ","))"])
        } catch {
            logger.error(
                "apps file not reloaded; the apps in use are kept", metadata: ["file": "\(path)", "reason": "\(error)"])
            throw error
        }
    }
}

/// Reloads the apps file on each SIGHUP until the worker stops.
struct AppsReloadService: Service {
    let reloader: AppsReloader

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        // Not `signals.cancelOnGracefulShutdown()`: that is swift-async-algorithms' `merge`, whose `next()` holds a
        // lock across `withUnsafeThrowingContinuation`, which Swift 6.3 may re-enqueue before running its closure
        // (swift-async-algorithms issue 430). A worker stopping while that happened hung on its own lock.
        await cancelWhenGracefulShutdown {
            for await _ in signals { try? reloader.reload() }
        }
    }
}
