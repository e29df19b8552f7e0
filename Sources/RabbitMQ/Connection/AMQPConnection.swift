import Logging

/// A connection to a RabbitMQ broker, driven by one dedicated thread that owns the rabbitmq-c state.
///
/// All methods are safe to call from any task, concurrently. Queue operations go over a control channel,
/// publishes over a channel in confirm mode, and each consumer gets a channel of its own; all of them are
/// multiplexed on this one connection. None of the calls blocks a cooperative thread: they queue a command
/// for the connection thread and suspend until it answers.
///
/// With ``AMQPConfiguration/reconnect`` set, losing the broker (restart, network cut, missed heartbeats) does not
/// end the connection: the thread reconnects with backoff and jitter, runs the `onConnect` hook again (to
/// redeclare the topology), then re-opens the consumers, whose iterators go on. Meanwhile:
/// - a publish sent but not yet confirmed when the connection dropped fails with
///   ``AMQPError/Code/connectionClosed`` — never reported as confirmed; it may or may not have reached the queue,
///   so an at-least-once caller publishes it again;
/// - publishes and queue operations issued while reconnecting wait for the new connection;
/// - queue operations that were awaiting their reply fail with ``AMQPError/Code/connectionClosed``;
/// - settling a delivery of the lost connection is a no-op: the broker delivers the message again.
///
/// Close the connection with ``close()``; dropping the last reference closes it too, without waiting.
public final class AMQPConnection: Sendable {
    /// Where the connection stands, for health checks.
    public enum State: Sendable, Hashable {
        /// Open: commands go to the broker.
        case connected
        /// Lost and being re-established; commands wait.
        case reconnecting
        /// Closed by ``close()`` or failed for good.
        case closed
    }

    /// Runs after every (re)connect, before consumers resume: declare the topology here.
    public typealias ConnectHook = @Sendable (AMQPConnection) async throws -> Void

    let mailbox: Mailbox
    /// Runs tasks that prefer it on the connection's thread (``AMQPConnectionExecutor``): iterate a consumer there
    /// to take its deliveries without a hop to another thread per batch.
    public let executor: AMQPConnectionExecutor
    let logger: Logger
    let status = ConnectionStatus()
    private let onConnect: ConnectHook?
    /// The configuration the connection was opened with.
    public let configuration: AMQPConfiguration

    private init(configuration: AMQPConfiguration, mailbox: Mailbox, logger: Logger, onConnect: ConnectHook?) {
        self.configuration = configuration
        self.mailbox = mailbox
        self.executor = AMQPConnectionExecutor(mailbox: mailbox)
        self.logger = logger
        self.onConnect = onConnect
    }

    deinit {
        _ = mailbox.submit(.close(nil))
    }

    /// Connects, logs in and runs `onConnect`; fails with ``AMQPError/Code/connectionFailed`` or
    /// ``AMQPError/Code/authenticationFailed`` within `configuration.connectTimeout` (once for the TCP
    /// connect and once for the handshake), or with the hook's error (``AMQPError/Code/setupFailed`` unless it
    /// threw an ``AMQPError``). The first connect is not retried: reconnecting starts once a connection was up.
    ///
    /// - Parameter onConnect: runs now and again after every reconnect, before consumers are re-opened.
    public static func connect(
        _ configuration: AMQPConfiguration,
        logger: Logger,
        onConnect: ConnectHook? = nil
    ) async throws(AMQPError) -> AMQPConnection {
        let mailbox = try Mailbox()
        let connection = AMQPConnection(
            configuration: configuration, mailbox: mailbox, logger: logger, onConnect: onConnect)
        let result: Result<Void, AMQPError> = await withUnsafeContinuation { continuation in
            do throws(AMQPError) {
                try ConnectionLoop.start(
                    configuration: configuration, mailbox: mailbox, executor: connection.executor,
                    status: connection.status, logger: logger,
                    reconnected: { [weak connection] generation in connection?.runHook(afterReconnect: generation) },
                    connected: continuation)
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        try result.get()
        if let onConnect {
            do {
                try await onConnect(connection)
            } catch {
                await connection.close()
                throw AMQPError(setupFailure: error)
            }
        }
        return connection
    }

    /// Where the connection stands now.
    public var state: State { status.state }

    /// True while the connection is open (false while reconnecting and after it ended): for health checks.
    public var isConnected: Bool { status.state == .connected }

    /// True while the broker blocks publishing (connection.blocked, e.g. a memory or disk alarm): publishes
    /// wait until connection.unblocked.
    public var isBlocked: Bool { status.isBlocked }

    /// How many times the connection was re-established after a loss.
    public var reconnectCount: Int { status.reconnects }

    /// Closes the connection cleanly (connection.close and close-ok, bounded by `closeTimeout`).
    ///
    /// Idempotent. Publishes not yet confirmed fail with ``AMQPError/Code/closed``; consumers stop iterating,
    /// and the broker requeues their unacknowledged deliveries. While reconnecting, it stops trying.
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

    /// Called by the connection thread once a new connection is open. The thread cannot await, so the hook
    /// runs as a task of its own and reports back through the mailbox; consumers resume after it.
    private func runHook(afterReconnect generation: UInt64) {
        guard let onConnect else {
            _ = mailbox.submit(.restored(generation: generation, .success(())))
            return
        }
        Task {
            let result: Result<Void, AMQPError>
            do {
                try await onConnect(self)
                result = .success(())
            } catch {
                result = .failure(AMQPError(setupFailure: error))
            }
            _ = self.mailbox.submit(.restored(generation: generation, result))
        }
    }
}

extension AMQPError {
    /// The error of a failed on-connect hook: its own if it threw an `AMQPError`, otherwise ``Code/setupFailed``.
    init(setupFailure error: any Error) {
        if let error = error as? AMQPError {
            self = error
        } else {
            self.init(.setupFailed, "the on-connect hook failed: \(error)")
        }
    }
}
