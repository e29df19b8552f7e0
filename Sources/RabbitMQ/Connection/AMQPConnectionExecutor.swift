import Dispatch

/// A `TaskExecutor` that runs jobs on the connection's own thread, between its turns of reading and writing.
///
/// A consumer that iterates with this preference (`withTaskExecutorPreference(connection.executor) { for try await
/// delivery in consumer { … } }`) takes each turn's deliveries on the thread that read them: the thread hands them
/// over and runs the consumer before it next waits on the socket, and the consumer's acks are written in the same
/// turn. Without it, every batch of deliveries wakes another thread for the consumer (an eventfd write, a context
/// switch), which is what a consumer of small messages spends most of its time on.
///
/// Only short steps belong here: while a job runs, the connection reads and writes nothing (a consumer that
/// starts long work for a delivery starts it as a task with another preference). Once the connection has ended,
/// jobs run on Dispatch's global queue instead.
public final class AMQPConnectionExecutor: TaskExecutor, Sendable {
    private let mailbox: Mailbox

    init(mailbox: Mailbox) {
        self.mailbox = mailbox
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !mailbox.enqueue(job) { runElsewhere(job) }
    }

    /// Runs `job` on Dispatch's global queue, for a connection whose thread has ended.
    func runElsewhere(_ job: UnownedJob) {
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
