import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldStore

/// `herald jobs show ID [--app A]`, `herald jobs watch ID [--app A]` and `herald jobs cancel ID [--app A]`.
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Look at, watch, cancel and validate jobs.",
        subcommands: [ShowJob.self, WatchJob.self, CancelJob.self, ValidateJobs.self]
    )
}

/// Which job a `herald jobs` command means: ids are scoped by app, so `--app` picks one; without it, the id must be
/// used by one app only.
struct JobSelection: ParsableArguments {
    @Argument(help: "The job id.")
    var id: String

    @Option(help: "The job's app (needed when more than one app has a job with this id).")
    var app: String?

    /// The selected job, or a validation error that says which apps use the id.
    func resolve(in store: Store) async throws -> JobStatus {
        if let app {
            guard let job = try await store.job(app: app, id: id) else {
                throw ValidationError("app \(app) has no job with id \(id)")
            }
            return job
        }
        let jobs = try await store.jobs(id: id)
        guard let job = jobs.first else { throw ValidationError("no job with id \(id)") }
        guard jobs.count == 1 else {
            let apps = jobs.map(\.app).joined(separator: ", ")
            throw ValidationError("apps \(apps) each have a job with id \(id): choose one with --app")
        }
        return job
    }
}

/// `herald jobs show ID [--app A]`: state, counters and the share settled.
struct ShowJob: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a job's state and counters.")

    @OptionGroup var services: ServiceOptions
    @OptionGroup var job: JobSelection

    func run() async throws {
        let logger = services.makeLogger(label: "herald.jobs")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let selection = self.job
        let (job, progress) = try await withStore(database, logger: logger) { store in
            let job = try await selection.resolve(in: store)
            return (job, try await store.jobProgress(app: job.app, id: job.id))
        }
        let c = job.counters
        print("job \(job.id): app \(job.app), \(job.state.rawValue), target \(job.targetKind)")
        print(
            "targeted \(c.targeted), sent \(c.sent), pruned \(c.pruned), failed \(c.failed), expired \(c.expired), retried \(c.retried)"
        )
        if let progress, job.state != .queued, job.state != .scheduled { print(JobProgressText.showLine(progress)) }
        if let error = job.error { print("error: \(error)") }
    }
}

/// `herald jobs cancel ID [--app A]`: nothing more of the job is sent.
struct CancelJob: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel a queued, scheduled or running job: nothing more of it is sent."
    )

    @OptionGroup var services: ServiceOptions
    @OptionGroup var job: JobSelection

    func run() async throws {
        let logger = services.makeLogger(label: "herald.jobs")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let selection = self.job
        let (key, previous, current) = try await withStore(database, logger: logger) { store in
            let job = try await selection.resolve(in: store)
            return (job.key, try await store.cancelJob(job.key), try await store.job(app: job.app, id: job.id)?.state)
        }
        if let previous {
            print("job \(key.id) of app \(key.app) cancelled (was \(previous.rawValue))")
        } else if let current {
            throw ValidationError("job \(key.id) of app \(key.app) is already \(current.rawValue)")
        } else {
            throw ValidationError("no job with id \(key.id)")
        }
    }
}
