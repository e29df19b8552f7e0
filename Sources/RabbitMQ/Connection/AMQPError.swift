/// The one error type of the `RabbitMQ` module.
///
/// `description` is safe to log: it never contains a password, a message body or a header value.
public struct AMQPError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, as an open set: new codes may be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case connectionFailed, authenticationFailed, connectionClosed, channelClosed, consumerCancelled, setupFailed
            case publishNacked, messageReturned, invalidURL, unsupported, timeout, closed, protocolError
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The TCP connection or the AMQP handshake could not be established.
        public static let connectionFailed = Code(.connectionFailed)
        /// The broker refused the credentials (AMQP reply code 403 during the handshake).
        public static let authenticationFailed = Code(.authenticationFailed)
        /// The broker closed the connection, the socket dropped, or heartbeats were missed.
        public static let connectionClosed = Code(.connectionClosed)
        /// The broker closed a channel; `replyCode` says why (404 not found, 406 precondition failed, …).
        public static let channelClosed = Code(.channelClosed)
        /// The broker cancelled a consumer, for example because its queue was deleted.
        public static let consumerCancelled = Code(.consumerCancelled)
        /// The broker answered a confirmed publish with basic.nack.
        public static let publishNacked = Code(.publishNacked)
        /// A mandatory publish could not be routed and came back with basic.return.
        public static let messageReturned = Code(.messageReturned)
        /// An AMQP URL could not be parsed.
        public static let invalidURL = Code(.invalidURL)
        /// A feature that is not supported yet was requested (for example `amqps://`).
        public static let unsupported = Code(.unsupported)
        /// An operation did not finish within its time limit.
        public static let timeout = Code(.timeout)
        /// The connection was closed by this process; the operation was not carried out.
        public static let closed = Code(.closed)
        /// The on-connect hook (topology declaration) failed with an error that is not an `AMQPError`.
        public static let setupFailed = Code(.setupFailed)
        /// rabbitmq-c or the broker reported something that breaks the protocol, or a resource ran out.
        public static let protocolError = Code(.protocolError)

        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation, safe to log.
    public var message: String
    /// The AMQP reply code from channel.close, connection.close or basic.return, when the broker sent one.
    public var replyCode: UInt16?
    /// The rabbitmq-c status (`amqp_status_enum`) underneath, when the library reported one.
    public var libraryStatus: Int32?
    /// Where the error was created.
    public var file: String
    /// Where the error was created.
    public var line: Int

    /// Creates an error; normally only this module does.
    public init(
        _ code: Code,
        _ message: String,
        replyCode: UInt16? = nil,
        libraryStatus: Int32? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.replyCode = replyCode
        self.libraryStatus = libraryStatus
        self.file = file
        self.line = line
    }

    /// Code, reply code, library status and message; never a password or a message body.
    public var description: String {
        var text = "AMQPError(\(code)"
        if let replyCode { text += ", reply code \(replyCode)" }
        if let libraryStatus { text += ", status \(libraryStatus)" }
        return text + "): \(message)"
    }
}
