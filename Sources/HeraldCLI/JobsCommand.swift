import ArgumentParser
import Foundation
import HeraldStore

/// `herald jobs show ID` and `herald jobs cancel ID`.
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Look at and cancel jobs.",
        subcommands: [ShowJob.self, CancelJob.self]
    )
}

/// `herald jobs show ID`: state and counters.
struct ShowJob: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a job's state and counters.")

    @OptionGroup var services: ServiceOptions

    @Argument(help: "The job id.")
    var id: String

    func run() async throws {
        let logger = services.makeLogger(label: "herald.jobs")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let id = self.id
        guard let job = try await withStore(database, logger: logger, { store in try await store.job(id: id) }) else {
            throw ValidationError("no job with id \(id)")
        }
        let c = job.counters
        print("job \(job.id): app \(job.app), \(job.state.rawValue), target \(job.targetKind)")
        print(
            "targeted \(c.targeted), sent \(c.sent), pruned \(c.pruned), failed \(c.failed), expired \(c.expired), retried \(c.retried)"
        )
        if let error = job.error { print("error: \(error)") }
    }
}

/// `herald jobs cancel ID`: nothing more of the job is sent.
struct CancelJob: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a queued, scheduled or running job: nothing more of it is sent."
    )

    @OptionGroup var services: ServiceOptions

    @Argument(help: "The job id.")
    var id: String

    func run() async throws {
        let logger = services.makeLogger(label: "herald.jobs")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let id = self.id
        let (previous, current) = try await withStore(database, logger: logger) { store in
            (try await store.cancelJob(id: id), try await store.job(id: id)?.state)
        }
        if let previous {
            print("job \(id) cancelled (was \(previous.rawValue))")
        } else if let current {
            throw ValidationError("job \(id) is already \(current.rawValue)")
        } else {
            throw ValidationError("no job with id \(id)")
        }
    }
}
