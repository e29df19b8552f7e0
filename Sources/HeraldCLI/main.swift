import ArgumentParser
import HeraldCommandLine
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
    /// Parses the command line and runs the command, as `AsyncParsableCommand.main()` does, except that an error a
    /// command throws is printed as a sentence (`ErrorSentence`), never as a library's debug description.
    static func runFromCommandLine() async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            // ArgumentParser's own (exit codes, help, validation) print as it prints them.
            if String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") { exit(withError: error) }
            exit(withError: ErrorSentence(ErrorSentence.describing(error)))
        }
    }
}
