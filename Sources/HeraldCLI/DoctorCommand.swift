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

    @Option(help: "The apps file (env HERALD_APPS_FILE).")
    var appsFile: String?

    @Option(help: "The directory of NNN_name.sql migrations (env HERALD_SCHEMAS_DIR).")
    var schemas: String?

    @Option(help: "Queue name prefix, as the workers run with.")
    var queuePrefix: String = Topology.defaultPrefix

    @Option(help: "Queue type of the work queues, as the workers run with: classic or quorum.")
    var queueType: String = "classic"

    @Flag(help: "Print the findings as one JSON document instead of lines.")
    var json = false

    @Flag(help: "Exit 1 on warnings too (a certificate near expiry, a queue as an older Herald declared it).")
    var strict = false

    func run() async throws {
        guard let type = Topology.QueueType(rawValue: queueType) else {
            throw ValidationError("--queue-type must be classic or quorum")
        }
        let logger = services.makeLogger(label: "herald.doctor")
        let deployment = Doctor.Deployment(
            amqpURL: Self.resolve(services.resolvedAMQPURL),
            databaseURL: Self.resolve(services.resolvedDatabaseURL),
            appsFile: appsFile ?? Environment.get("HERALD_APPS_FILE"),
            schemasDirectory: schemas ?? Environment.get("HERALD_SCHEMAS_DIR") ?? "schemas",
            topology: Topology(prefix: queuePrefix, queueType: type)
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
