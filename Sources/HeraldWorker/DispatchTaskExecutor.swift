import Dispatch

/// A `TaskExecutor` that runs jobs on Dispatch's global concurrent queue, as Swift's own global executor does on
/// Linux.
///
/// `herald` makes NIO's event loops Swift's global executor (`main.swift`), which suits the planner: a single-device
/// job is short steps between waits on sockets, and each step runs on the loop that read what it waited for. The
/// deliverer's steps are long (a broadcast batch of 1,000 devices at a time): on an event loop they hold up that
/// loop's sockets, APNs connections among them, so the deliverer's tasks prefer this executor
/// (`ConsumerLoop.run(executor:)`). Measured with `herald bench pipeline` (docs/decisions/0003): with the loops for
/// everything the broadcast's worker CPU per notification rose by about 15 %; with this for the deliverer it is as
/// before, while the planner's single-device jobs keep their saving.
final class DispatchTaskExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
