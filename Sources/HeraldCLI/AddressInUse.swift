import Foundation
import HeraldCommandLine
import NIOCore
import NIOPosix

/// A server socket that could not listen because another process holds its address, in a sentence that names the
/// address, the port and the setting that chose them, rather than NIO's `IOError error 1`.
enum AddressInUse {
    /// `error` as the sentence if it is "address already in use" (EADDRINUSE), else `error` itself.
    /// - Parameters:
    ///   - what: the server, e.g. `the API`, `the worker's metrics and health server`.
    ///   - setting: how to choose another port, e.g. `--port (api.port, HERALD_API_PORT)`.
    ///   - source: where the port in use came from, e.g. `the default`, `--port`.
    static func explain(
        _ error: any Error, what: String, host: String, port: Int, setting: String, source: String? = nil
    ) -> any Error {
        guard isAddressInUse(error) else { return error }
        let from = source.map { " (set by \($0))" } ?? ""
        return ErrorSentence(
            "\(what) cannot listen on \(host) port \(port)\(from): the address is already in use by another process; "
                + "stop that process or choose another port with \(setting)")
    }

    /// Binds `host` `port` once and lets it go, before any service starts: an address another process holds is then
    /// reported (as `explain` says it) at once, rather than by a server failing to bind inside a service group that
    /// must first shut its other services down. Port 0 (any) is not checked.
    static func checkFree(host: String, port: Int, what: String, setting: String, source: String?) async throws {
        guard port != 0 else { return }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
        } catch {
            throw explain(error, what: what, host: host, port: port, setting: setting, source: source)
        }
        try? await channel.close()
    }

    /// Whether `error` is EADDRINUSE from a bind (NIO's `IOError`, or a POSIX error).
    static func isAddressInUse(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == EADDRINUSE }
        if let error = error as? POSIXError { return error.code == .EADDRINUSE }
        return false
    }

    /// The setting of `port`'s key as a sentence names it: `--port (api.port, HERALD_API_PORT)`.
    static func setting(_ port: ConfigurationKey) -> String { "\(port.option) (\(port.name), \(port.environment))" }
}
