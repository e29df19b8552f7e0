import CRabbitMQ
import Glibc
import Synchronization

/// The command queue from async callers to the connection thread, with an eventfd to wake its `poll()`.
///
/// Submitting never blocks: it appends under a short lock and writes the eventfd only when the thread has
/// not been woken since it last drained, so a burst of publishes costs one wake-up. The thread takes the
/// whole queue in one swap per loop turn. The queue holds at most one command per suspended caller (every
/// command but settle/release belongs to a caller awaiting its answer, and settles are bounded by prefetch),
/// so its length is bounded by the callers' own concurrency.
final class Mailbox: Sendable {
    private struct State {
        var commands: [Command] = []
        var wakePending = false
        /// Commands queued without a wake-up since the thread last drained.
        var unannounced = 0
        var terminal: AMQPError?
        /// Jobs of tasks that prefer the connection's executor (`AMQPConnectionExecutor`), run by the thread at the
        /// start of its next turn.
        var jobs: [UnownedJob] = []
        /// The thread has ended: jobs go to Dispatch instead.
        var jobsEnded = false
        /// The thread queued commands itself (without a wake-up) since it last drained.
        var ownerQueued = false

        /// Whether the caller is to write the eventfd: only the first since the thread last drained.
        mutating func claimWakeUp() -> Bool {
            if wakePending { return false }
            wakePending = true
            return true
        }
    }

    /// The connection thread (`pthread_self()`), 0 until it starts: what it queues needs no wake-up, since it takes
    /// the queues before it next waits.
    private let owner = Atomic<UInt>(0)

    /// How many commands submitted without a wake-up may wait before one wakes the thread anyway.
    static let unannouncedLimit = 64

    /// Readable when commands are waiting; owned by the mailbox so that it is never closed while a
    /// submitter might still write to it.
    let wakeDescriptor: Int32
    private let state = Mutex(State())

    init() throws(AMQPError) {
        let descriptor = herald_eventfd()
        guard descriptor >= 0 else {
            throw AMQPError(.connectionFailed, "eventfd failed with errno \(errno)")
        }
        wakeDescriptor = descriptor
    }

    deinit {
        Glibc.close(wakeDescriptor)
    }

    /// Queues `command` for the thread, or returns the error that ended the connection.
    func submit(_ command: Command, announce: Bool = true) -> AMQPError? {
        submit(contentsOf: CollectionOfOne(command), announce: announce)
    }

    /// Queues `commands` for the thread together (one turn of the thread takes them all), or returns the error
    /// that ended the connection.
    ///
    /// With `announce` false (plain acks), the thread is not woken for them until `unannouncedLimit` wait: it takes
    /// them on its next turn, which comes with the next frame from the broker or within `ConnectionLoop`'s
    /// `unannouncedWait` while deliveries are out. A wake-up per ack (a write to the eventfd, a turn of the
    /// thread) was most of what acking cost.
    func submit(contentsOf commands: some Collection<Command>, announce: Bool = true) -> AMQPError? {
        let onThread = isOwnerThread
        let (wake, error): (Bool, AMQPError?) = state.withLock { state in
            if let terminal = state.terminal { return (false, terminal) }
            state.commands.append(contentsOf: commands)
            // The thread itself (a consumer acking as it iterates there): it takes the commands before it next
            // waits (`hasWork`).
            if onThread {
                state.ownerQueued = true
                return (false, nil)
            }
            if state.wakePending { return (false, nil) }
            if !announce {
                state.unannounced += commands.count
                if state.unannounced < Self.unannouncedLimit { return (false, nil) }
            }
            return (state.claimWakeUp(), nil)
        }
        if wake { signalWakeUp() }
        return error
    }

    /// Writes the eventfd, once `State.claimWakeUp()` said this caller is the one to.
    private func signalWakeUp() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Marks the calling thread as the connection thread.
    func adoptCurrentThread() {
        owner.store(UInt(pthread_self()), ordering: .releasing)
    }

    private var isOwnerThread: Bool {
        owner.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Queues a job for the thread, waking it unless it queued the job itself. Returns false once the thread has
    /// ended: the caller runs the job elsewhere.
    func enqueue(_ job: UnownedJob) -> Bool {
        let onThread = isOwnerThread
        let (accepted, wake): (Bool, Bool) = state.withLock { state in
            if state.jobsEnded { return (false, false) }
            state.jobs.append(job)
            return (true, !onThread && state.claimWakeUp())
        }
        if wake { signalWakeUp() }
        return accepted
    }

    /// Whether jobs, or commands the thread queued itself, are waiting: they came without a wake-up, so the thread
    /// does not sleep while they do. (Plain acks from other threads keep waiting for the thread's next turn.)
    var hasWork: Bool {
        state.withLock { !$0.jobs.isEmpty || $0.ownerQueued }
    }

    /// Swaps the queued jobs into `jobs` (which must be empty).
    func takeJobs(into jobs: inout [UnownedJob]) {
        state.withLock { swap(&$0.jobs, &jobs) }
    }

    /// The thread ends: returns the jobs still queued; later ones are refused (`enqueue` returns false).
    func endJobs() -> [UnownedJob] {
        state.withLock { state in
            state.jobsEnded = true
            defer { state.jobs = [] }
            return state.jobs
        }
    }

    /// Swaps the queued commands into `batch` (which must be empty, and keeps its capacity for next time).
    func takeAll(into batch: inout [Command]) {
        state.withLock { state in
            swap(&state.commands, &batch)
            state.wakePending = false
            state.unannounced = 0
            state.ownerQueued = false
        }
    }

    /// Resets the eventfd after `poll()` reported it readable; called before `takeAll` in the same turn.
    func acknowledgeWakeUp() {
        var value: UInt64 = 0
        _ = read(wakeDescriptor, &value, MemoryLayout<UInt64>.size)
    }

    /// Refuses all further commands with `error` and returns those still queued, for the thread to fail.
    func close(with error: AMQPError) -> [Command] {
        state.withLock { state in
            if state.terminal == nil { state.terminal = error }
            defer { state.commands = [] }
            return state.commands
        }
    }

    /// The error that ended the connection, once it has ended.
    var terminalError: AMQPError? {
        state.withLock { $0.terminal }
    }
}
