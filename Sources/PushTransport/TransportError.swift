import CNGHTTP2

/// Why the transport could not deliver a request and get an answer: no connection, TLS or HTTP/2 failure, timeout,
/// connection loss or shutdown.
///
/// APNs rejections (4xx, 5xx) are not errors: they are ``APNSOutcome`` values. `description` is safe to log: it never
/// contains device tokens, provider tokens (JWTs) or payloads.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure. An open set: codes may be added.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case connectFailed
            case tlsFailed
            case alpnNotH2
            case timeout
            case connectionClosed
            case goAway
            case streamReset
            case shutDown
            case protocolError
            case providerToken
            case cancelled
        }

        private let base: Base

        /// The TCP connection could not be established.
        public static let connectFailed = Code(base: .connectFailed)
        /// The TLS handshake failed (untrusted certificate, wrong host name, protocol version, …).
        public static let tlsFailed = Code(base: .tlsFailed)
        /// The server did not agree to HTTP/2 through ALPN.
        public static let alpnNotH2 = Code(base: .alpnNotH2)
        /// No answer within the request timeout (or the connection could not be set up in time).
        public static let timeout = Code(base: .timeout)
        /// The connection closed while the request was in flight: it may or may not have been delivered.
        public static let connectionClosed = Code(base: .connectionClosed)
        /// The server sent GOAWAY and the request could not be placed on another connection.
        public static let goAway = Code(base: .goAway)
        /// The server reset the request's stream without answering.
        public static let streamReset = Code(base: .streamReset)
        /// The client was shut down before the request was answered.
        public static let shutDown = Code(base: .shutDown)
        /// An HTTP/2 protocol failure (nghttp2 reported an error).
        public static let protocolError = Code(base: .protocolError)
        /// No provider token could be signed.
        public static let providerToken = Code(base: .providerToken)
        /// The calling task was cancelled while the request waited for room in the queue.
        public static let cancelled = Code(base: .cancelled)

        public var description: String { base.rawValue }
    }

    /// What kind of failure.
    public var code: Code
    /// A sentence for operators (no secrets).
    public var message: String
    /// The error that caused this one, if any (a NIO or NIOSSL error; none of them carry secrets).
    public var underlying: (any Error & Sendable)?
    /// Where the error was created.
    public var file: String
    /// Where the error was created.
    public var line: Int

    public init(
        _ code: Code,
        _ message: String,
        underlying: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// Whether the request certainly never reached the server, so that sending it again cannot duplicate it.
    public var requestWasNotSent: Bool {
        code == .connectFailed || code == .tlsFailed || code == .alpnNotH2 || code == .shutDown
            || code == .providerToken || code == .cancelled
    }

    public var description: String {
        if let underlying {
            return "TransportError.\(code): \(message) (\(String(describing: underlying)))"
        }
        return "TransportError.\(code): \(message)"
    }
}

extension TransportError {
    /// The one place where an nghttp2 library error code becomes a Swift error.
    static func nghttp2(_ code: some BinaryInteger, _ what: String, file: String = #fileID, line: Int = #line) -> Self {
        let text = String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: code)))
        return TransportError(.protocolError, "\(what): \(text) (\(code))", file: file, line: line)
    }
}
