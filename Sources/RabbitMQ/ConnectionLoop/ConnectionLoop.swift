import CRabbitMQ
import Glibc
import Logging

/// The owner of one `amqp_connection_state_t`, running on its own thread (rabbitmq-c is blocking and not
/// thread-safe). Nothing here is touched from any other thread: async callers reach it through the
/// ``Mailbox`` and hear back through continuations and ``DeliveryBuffer``s.
///
/// Each turn of the loop drains every queued command (so a burst of publishes is written in one turn),
/// then reads the frames rabbitmq-c already holds or `poll()`s the socket and the mailbox's eventfd with a
/// timeout short enough that rabbitmq-c gets to send heartbeats, then checks the timers.
final class ConnectionLoop {
    enum Phase {
        case running
        /// The connection was lost; the next attempt to open a new one is due at `due`.
        case reconnecting(due: ContinuousClock.Instant)
        /// connection.close sent; waiting for close-ok until the deadline.
        case closing(deadline: ContinuousClock.Instant)
        case finished
    }

    static let controlChannelID: UInt16 = 1
    static let publisherChannelID: UInt16 = 2
    /// Frames handled before commands get another turn, so a flood of deliveries cannot starve publishers.
    static let frameBudget = 256

    let configuration: AMQPConfiguration
    let mailbox: Mailbox
    let status: ConnectionStatus
    /// Tells the ``AMQPConnection`` that connection `generation` is open, to run its on-connect hook.
    let reconnected: @Sendable (UInt64) -> Void
    var logger: Logger
    var connection: amqp_connection_state_t?
    let pool = ScratchPool()

    var phase = Phase.running
    var closeWaiters: [UnsafeContinuation<Void, Never>] = []
    var heartbeat = Duration.zero
    var channelMax = 0
    /// Indexed by channel id.
    var channels: [ChannelState?] = []

    var confirms = ConfirmWindow()
    /// Publishes waiting for the publisher channel, the end of connection.blocked, or room in the window.
    var parked = RingBuffer<PublishRequest>()
    var isPublisherReady = false
    var isBlocked = false
    /// Consumers whose outbox has deliveries from the current turn.
    var consumersWithOutbox: [ConsumerState] = []
    /// Consumer channels with plain acks taken this turn, sent together by `sendPendingAcks()`.
    var channelsWithPendingAcks: [ChannelState] = []

    /// Counts connections, one more per reconnect; deliveries carry it so stale settlements are recognised.
    var generation: UInt64 = 1
    /// Failed attempts since the connection was last restored, for the backoff.
    var reconnectAttempts = 0
    /// Consumers to open again once the new connection is up and the on-connect hook has run.
    var consumersToRestore: [ConsumerState] = []
    /// Commands that arrived while reconnecting, carried out once connected again.
    var held: [Command] = []

    private var batch: [Command] = []
    private var jobs: [UnownedJob] = []
    /// The executor whose jobs `runJobs()` runs.
    let executor: AMQPConnectionExecutor
    /// The socket (fd -1 while there is none) and the mailbox's eventfd.
    var pollDescriptors: [pollfd] = []
    private var lastInbound = ContinuousClock.now
    private var lastServiced = ContinuousClock.now

    init(
        configuration: AMQPConfiguration,
        mailbox: Mailbox,
        executor: AMQPConnectionExecutor,
        status: ConnectionStatus,
        logger: Logger,
        reconnected: @escaping @Sendable (UInt64) -> Void
    ) {
        self.configuration = configuration
        self.mailbox = mailbox
        self.executor = executor
        self.status = status
        self.reconnected = reconnected
        self.logger = logger
        self.logger[metadataKey: LogKey.broker] = "\(configuration.host):\(configuration.port)"
    }

    deinit {
        if let connection { amqp_destroy_connection(connection) }
    }

    /// Starts the thread, connects and logs in there, reports the outcome through `connected`, then runs
    /// the loop until the connection ends.
    static func start(
        configuration: AMQPConfiguration,
        mailbox: Mailbox,
        executor: AMQPConnectionExecutor,
        status: ConnectionStatus,
        logger: Logger,
        reconnected: @escaping @Sendable (UInt64) -> Void,
        connected: UnsafeContinuation<Result<Void, AMQPError>, Never>
    ) throws(AMQPError) {
        try ConnectionThread.start(name: "herald-amqp") {
            let loop = ConnectionLoop(
                configuration: configuration, mailbox: mailbox, executor: executor, status: status, logger: logger,
                reconnected: reconnected)
            switch loop.open() {
            case .failure(let error):
                status.update(.closed)
                for command in mailbox.close(with: error) { command.fail(with: error) }
                for job in mailbox.endJobs() { executor.runElsewhere(job) }
                connected.resume(returning: .failure(error))
            case .success:
                connected.resume(returning: .success(()))
                loop.run()
            }
        }
    }

    private func run() {
        pollDescriptors = [
            pollfd(fd: -1, events: Int16(POLLIN), revents: 0),
            pollfd(fd: mailbox.wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        mailbox.adoptCurrentThread()
        connectionOpened()
        while !isFinished {
            runJobs()
            mailbox.takeAll(into: &batch)
            corked(batch.count > 1) {
                for command in batch { handle(command) }
                sendPendingAcks()
            }
            batch.removeAll(keepingCapacity: true)
            pool.recycle()
            if isFinished { break }
            if case .reconnecting(let due) = phase {
                waitAndReconnect(due: due)
            } else {
                waitAndRead()
                checkTimers()
            }
        }
        // Tasks that prefer the connection's executor and were resumed as it ended (consumers told the end,
        // `close()` answered) go on elsewhere, and so does whatever such a task does from now on.
        for job in mailbox.endJobs() { executor.runElsewhere(job) }
        logger.debug("AMQP connection thread finished")
    }

    /// Runs the jobs of tasks that prefer the connection's executor (``AMQPConnectionExecutor``): a consumer that
    /// iterates there takes the deliveries of the last turn here, on this thread, instead of on another thread woken
    /// for them. What they queue (acks, say) is taken right after, in this turn.
    private func runJobs() {
        mailbox.takeJobs(into: &jobs)
        guard !jobs.isEmpty else { return }
        let unowned = executor.asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: unowned) }
        jobs.removeAll(keepingCapacity: true)
    }

    /// Starts watching a freshly opened connection's socket.
    func connectionOpened() {
        pollDescriptors[0].fd = amqp_get_sockfd(connection)
        lastInbound = .now
        lastServiced = .now
        status.update(.connected)
    }

    /// Waits on the mailbox alone, so that `close()` and new commands are handled during the backoff.
    func waitForMailbox(milliseconds: Int32) {
        var descriptor = pollfd(fd: mailbox.wakeDescriptor, events: Int16(POLLIN), revents: 0)
        let timeout = mailbox.hasWork ? 0 : max(0, milliseconds)
        if poll(&descriptor, 1, timeout) > 0 { mailbox.acknowledgeWakeUp() }
    }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// Reads frames rabbitmq-c already holds, or waits for the socket or the mailbox.
    ///
    /// `amqp_basic_publish` and blocked sends read from the socket themselves and queue the frames inside
    /// rabbitmq-c, where `poll()` cannot see them: so the buffers are checked first and then not waited on.
    private func waitAndRead() {
        guard let connection else { return }
        let buffered = amqp_data_in_buffer(connection) != 0 || amqp_frames_enqueued(connection) != 0
        // Jobs or commands this thread queued itself came without a wake-up: no sleep while they wait.
        let timeout = buffered || mailbox.hasWork ? 0 : pollTimeoutMilliseconds()
        let ready = pollDescriptors.withUnsafeMutableBufferPointer { descriptors in
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            return poll(descriptors.baseAddress, 2, timeout)
        }
        if ready < 0 && errno != EINTR {
            fail(with: AMQPError(.connectionClosed, "poll failed with errno \(errno)"))
            return
        }
        if pollDescriptors[1].revents != 0 { mailbox.acknowledgeWakeUp() }
        let socketReady = pollDescriptors[0].revents != 0
        let now = ContinuousClock.now
        // rabbitmq-c swallows heartbeat frames, so readable bytes are the only sign of a live broker.
        if socketReady { lastInbound = now }
        // A quiet connection still calls into rabbitmq-c regularly: that is where it sends heartbeats.
        if buffered || socketReady || now - lastServiced >= .milliseconds(Int64(pollTimeoutMilliseconds())) {
            lastServiced = now
            readFrames()
        }
    }

    /// Hands every complete frame rabbitmq-c can decode without blocking to `handle(_:on:)`, up to the budget.
    private func readFrames() {
        var frame = amqp_frame_t()
        var immediately = timeval(tv_sec: 0, tv_usec: 0)
        // One clock read for the turn's frames, not one per frame (three per delivery): a frame read here is
        // inbound traffic for the heartbeat check to within this turn.
        var received = false
        defer {
            if received { lastInbound = .now }
            flushDeliveries()
        }
        for _ in 0..<Self.frameBudget {
            guard let connection, !isFinished else { return }
            let status = amqp_simple_wait_frame_noblock(connection, &frame, &immediately)
            if status == AMQP_STATUS_TIMEOUT.rawValue { return }
            guard status == AMQP_STATUS_OK.rawValue else {
                fail(with: .translate(.status(status), phase: .running))
                return
            }
            received = true
            handle(frame)
            // Everything needed was copied out; let rabbitmq-c reuse the channel's decoding memory.
            if let connection = self.connection { amqp_maybe_release_buffers_on_channel(connection, frame.channel) }
            guard let connection = self.connection,
                amqp_data_in_buffer(connection) != 0 || amqp_frames_enqueued(connection) != 0
            else { return }
        }
    }

    private func pollTimeoutMilliseconds() -> Int32 {
        var milliseconds: Int64 = 1000
        if heartbeat > .zero {
            milliseconds = min(milliseconds * 5, heartbeat.milliseconds / 4)
        }
        if case .closing(let deadline) = phase {
            milliseconds = min(milliseconds, max(0, (deadline - .now).milliseconds))
        }
        var shortest: Int64? = nil
        if let due = heldAcksDue(now: .now) {
            // Held acks are sent when they are due, even if nothing else wakes the thread.
            shortest = max(1, due.milliseconds + 1)
        }
        if hasDeliveriesOut {
            // Their plain acks may be waiting in the mailbox unannounced: taken within this wait.
            shortest = min(shortest ?? .max, Self.unannouncedWait.milliseconds)
        }
        if let shortest { return Int32(min(milliseconds, shortest)) }
        return Int32(max(10, milliseconds))
    }

    /// The longest a plain ack submitted without a wake-up waits in the mailbox while deliveries are out.
    static let unannouncedWait: Duration = .milliseconds(10)

    /// Whether a consumer whose acks may come without a wake-up (`UnsettledDeliveries.acksMayWait`) holds
    /// deliveries nobody has settled. While one does, the thread turns at least every `unannouncedWait` (100 times
    /// a second, also while a delivery is held for long: a job waiting out a database outage, say).
    private var hasDeliveriesOut: Bool {
        for case let channel? in channels {
            if case .consumer(let consumer) = channel.role, consumer.unsettled.count > 0,
                UnsettledDeliveries.acksMayWait(prefetch: consumer.prefetch)
            {
                return true
            }
        }
        return false
    }

    private func checkTimers() {
        // Only a live (or closing) connection has timers; a lost one is already being replaced.
        switch phase {
        case .running, .closing: break
        case .reconnecting, .finished: return
        }
        let now = ContinuousClock.now
        if case .closing(let deadline) = phase, now >= deadline {
            logger.debug("AMQP connection.close-ok did not arrive in time")
            finish(.locallyClosed)
            return
        }
        if heartbeat > .zero, now - lastInbound > heartbeat * 2 {
            fail(with: AMQPError(.connectionClosed, "no data or heartbeat from the broker for \(now - lastInbound)"))
        }
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
