import Foundation
import HeraldCommandLine
import NIOCore

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

    /// Whether `error` is EADDRINUSE from a bind (NIO's `IOError`, or a POSIX error).
    static func isAddressInUse(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == EADDRINUSE }
        if let error = error as? POSIXError { return error.code == .EADDRINUSE }
        return false
    }

    /// The setting of `port`'s key as a sentence names it: `--port (api.port, HERALD_API_PORT)`.
    static func setting(_ port: ConfigurationKey) -> String { "\(port.option) (\(port.name), \(port.environment))" }
}
