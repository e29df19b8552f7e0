import NIOCore
import NIOPosix

// NIO's event loops run Swift concurrency's jobs instead of Dispatch's global pool, so a task that a socket read
// resumes (an APNs answer, a PostgreSQL result, a delivery from the broker) continues on the thread that read it,
// with no hop to another thread. With `herald bench pipeline --scenario jobs` the worker's CPU per single-device job
// fell by about 15 % (docs/decisions/0003); the deliverer's long broadcast batches opt out (`DispatchTaskExecutor`).
// It must happen before any task starts, so here rather than in a command. Nothing in Herald blocks a task for
// longer than a local file read, except `herald bench pipeline` waiting for its workers to exit after a run.
NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
await Herald.runFromCommandLine()

extension Herald {
    /// `AsyncParsableCommand.main()`, named so that top-level code does not pick the synchronous overload (which
    /// prints the help of any async command instead of running it).
    static func runFromCommandLine() async {
        await main()
    }
}
