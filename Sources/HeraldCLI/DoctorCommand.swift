import ArgumentParser
import HeraldCommandLine
import HeraldDoctor
import HeraldMessaging

/// `herald doctor`: check a deployment before the first real send.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the broker, the database and every app's credentials and endpoint; exit 1 on a failure.",
        discussion: """
            Prints one PASS, WARN or FAIL line per check, then a summary. It only looks: it declares, migrates and \
            sends nothing. Exit status 0 when nothing failed (warnings too, with --strict), 1 otherwise.
            """
    )

    @OptionGroup var services: ServiceOptions
    @OptionGroup var queues: QueueOptions
    @OptionGroup var apps: AppsFileOptions
    @OptionGroup var migration: MigrationOptions

    /// The keys the doctor reads besides the URLs, which it resolves on their own so that a missing or malformed
    /// one is reported as that check's failure while the other checks still run.
    static let keys: [ConfigurationKey] = [.logLevel] + QueueOptions.keys + [.appsFile, .schemasDirectory]

    @Flag(help: "Print the findings as one JSON document instead of lines.")
    var json = false

    @Flag(help: "Exit 1 on warnings too (a certificate near expiry, a queue as an older Herald declared it).")
    var strict = false

    func run() async throws {
        let settings = try services.resolve(Self.keys, with: [queues, apps, migration])
        let logger = ServiceOptions.makeLogger(label: "herald.doctor", configuration: settings)
        let deployment = Doctor.Deployment(
            amqpURL: Self.resolve(services.resolvedAMQPURL),
            databaseURL: Self.resolve(services.resolvedDatabaseURL),
            appsFile: settings.text(.appsFile),
            schemasDirectory: settings.requiredText(.schemasDirectory),
            topology: Topology(settings)
        )
        let report = await Doctor(deployment: deployment, logger: logger).run()
        print(json ? report.json : report.text, terminator: "")
        let status = report.exitStatus(strict: strict)
        if status != 0 { throw ExitCode(status) }
    }

    /// A URL, or the sentence saying why there is none (reported as that check's failure, not thrown, so that the
    /// other checks still run).
    static func resolve(_ url: () throws -> String) -> Result<String, Doctor.Unresolved> {
        do {
            return .success(try url())
        } catch {
            return .failure(Doctor.Unresolved("\(error)"))
        }
    }
}
