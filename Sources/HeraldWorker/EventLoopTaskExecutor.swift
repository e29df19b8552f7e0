import NIOPosix

/// A `TaskExecutor` that runs jobs on NIO's singleton event loops, as the global executor `herald` installs does
/// (`main.swift`): on the loop that enqueues the job when it is one of them (`any()` stays on the current loop), on
/// the next loop otherwise.
///
/// For work started from a loop that prefers another executor (the jobs consumer's loop on the AMQP connection's
/// thread): a child task inherits its parent's preference, and `globalConcurrentExecutor` is Dispatch's pool on
/// Linux, not the hooked global executor. With this preference a job's steps go on as they did without one: each
/// continues on the loop that read what it waited for (decision 0003).
final class EventLoopTaskExecutor: TaskExecutor {
    static let shared = EventLoopTaskExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        MultiThreadedEventLoopGroup.singleton.any().execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
