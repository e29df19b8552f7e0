import Logging

/// A connection to a RabbitMQ broker, driven by one dedicated thread that owns the rabbitmq-c state.
///
/// All methods are safe to call from any task, concurrently. Queue operations go over a control channel,
/// publishes over a channel in confirm mode, and each consumer gets a channel of its own; all of them are
/// multiplexed on this one connection. None of the calls blocks a cooperative thread: they queue a command
/// for the connection thread and suspend until it answers.
///
/// Close the connection with ``close()``; dropping the last reference closes it too, without waiting.
public final class AMQPConnection: Sendable {
    let mailbox: Mailbox
    let logger: Logger
    /// The configuration the connection was opened with.
    public let configuration: AMQPConfiguration

    private init(configuration: AMQPConfiguration, mailbox: Mailbox, logger: Logger) {
        self.configuration = configuration
        self.mailbox = mailbox
        self.logger = logger
    }

    deinit {
        _ = mailbox.submit(.close(nil))
    }

    /// Connects and logs in; fails with ``AMQPError/Code/connectionFailed`` or
    /// ``AMQPError/Code/authenticationFailed`` within `configuration.connectTimeout` (once for the TCP
    /// connect and once for the handshake).
    public static func connect(_ configuration: AMQPConfiguration, logger: Logger) async throws(AMQPError)
        -> AMQPConnection
    {
        let mailbox = try Mailbox()
        let result: Result<Void, AMQPError> = await withUnsafeContinuation { continuation in
            do throws(AMQPError) {
                try ConnectionLoop.start(
                    configuration: configuration, mailbox: mailbox, logger: logger, connected: continuation)
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        try result.get()
        return AMQPConnection(configuration: configuration, mailbox: mailbox, logger: logger)
    }

    /// Closes the connection cleanly (connection.close and close-ok, bounded by `closeTimeout`).
    ///
    /// Idempotent. Publishes not yet confirmed fail with ``AMQPError/Code/closed``; consumers stop iterating,
    /// and the broker requeues their unacknowledged deliveries.
    nonisolated(nonsending) public func close() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            if mailbox.submit(.close(continuation)) != nil { continuation.resume() }
        }
    }

    /// Queues `command` built around a fresh continuation and waits for the thread's answer.
    nonisolated(nonsending) func perform<Value>(
        _ makeCommand: (UnsafeContinuation<Result<Value, AMQPError>, Never>) -> Command
    ) async throws(AMQPError) -> Value {
        let result: Result<Value, AMQPError> = await withUnsafeContinuation { continuation in
            if let error = mailbox.submit(makeCommand(continuation)) {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}
