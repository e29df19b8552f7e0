import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldStore

/// `herald devices restore --app A --job ID`: puts back the devices a job pruned (after a prune that should not have
/// happened), from its dead-token records. Tokens registered again since are skipped, never overwritten.
struct RestoreDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore the devices a job pruned, as they were (user, locale, topics, environment, badge).",
        discussion: "Tokens registered again since the job pruned them are skipped (the newer row is kept). Running "
            + "it again restores nothing more."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app of the job.")
    var app: String

    @Option(help: "The job whose pruned devices to restore.")
    var job: String

    func validate() throws {
        do {
            try JobLimits.checkKey(app: app, id: job)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        let logger = services.makeLogger(label: "herald.devices")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let key = JobKey(app: app, id: job)
        let result = try await withStore(database, logger: logger) { store in
            guard let status = try await store.job(app: key.app, id: key.id) else {
                throw ValidationError("no job \(key.id) of app \(key.app)")
            }
            // A running job may prune again after the restore.
            guard status.state.isFinal else {
                throw ValidationError(
                    "job \(key.id) is \(status.state.rawValue); restore its devices once it has finished or been cancelled "
                        + "(herald jobs cancel)")
            }
            return try await store.restorePrunedDevices(key)
        }
        print(
            "devices restore: \(result.restored) restored, \(result.skipped) skipped (registered again since), "
                + "\(result.unrestorable) unrestorable (recorded without details), app \(app), job \(job)")
    }
}
