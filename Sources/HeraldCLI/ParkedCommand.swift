import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldMessaging
import HeraldStore
import HeraldWorker
import RabbitMQ

/// `herald parked list|replay|purge`: look through `herald.parked`, publish messages back to the queue they were
/// parked from once their cause is fixed, or drop them.
struct ParkedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parked",
        abstract: "List, replay or purge the messages in the parking queue (herald.parked).",
        discussion: """
            herald parked list --reason unknown_app
            herald parked replay --reason unknown_app          (after adding the app to the apps file)
            herald parked purge --older-than 7d
            Each command looks at up to 100,000 messages, holding them unacknowledged until it ends; bodies are
            never printed (they can hold device tokens): only the job id and app of a job or batch.
            """,
        subcommands: [List.self, Replay.self, Purge.self]
    )

    /// The options every `herald parked` command shares.
    struct Options: ParsableArguments {
        @OptionGroup var services: ServiceOptions
        @OptionGroup var queues: QueuePrefixOptions

        @Option(help: "Only messages whose reason starts with this (for example unknown_app).")
        var reason: String?

        func validate() throws {
            if let reason {
                guard (1...1000).contains(reason.count), ParkedMessage.clean(reason, limit: 1000) == reason else {
                    throw ValidationError("--reason must be 1 to 1000 characters without control characters")
                }
            }
        }

        /// The broker's URL and the queue prefix (and with `database`, the database's URL), each required.
        func resolve(database: Bool = false) throws -> ResolvedConfiguration {
            let urls: [ConfigurationKey] = database ? [.amqpURL, .databaseURL] : [.amqpURL]
            return try services.resolve(urls + QueuePrefixOptions.keys, required: Set(urls), with: [queues])
        }

        /// Runs `body` with the parked messages of the resolved topology over a connection of its own.
        func withParked<T>(
            _ settings: ResolvedConfiguration, _ body: (ParkedMessages) async throws -> T
        ) async throws -> T {
            let logger = ServiceOptions.makeLogger(label: "herald.parked", configuration: settings)
            let topology = Topology(prefix: settings.requiredText(.queuePrefix))
            var amqp = try AMQPConfiguration(url: settings.requiredText(.amqpURL))
            amqp.connectionName = "herald-parked"
            let connection = try await AMQPConnection.connect(amqp, logger: logger)
            do {
                let result = try await body(ParkedMessages(connection: connection, topology: topology))
                await connection.close()
                return result
            } catch let error as AMQPError where error.replyCode == 404 {
                await connection.close()
                throw ValidationError(
                    "the queue \(topology.parked) does not exist (check queue.prefix, from "
                        + "\(settings.source(of: .queuePrefix)))")
            } catch {
                await connection.close()
                throw error
            }
        }
    }

    static func validateLimit(_ limit: Int) throws {
        guard (1...1_000_000).contains(limit) else { throw ValidationError("--limit must be 1 to 1000000") }
    }

    static func validateID(_ id: String?) throws {
        guard let id else { return }
        guard (1...200).contains(id.count), ParkedMessage.clean(id, limit: 200) == id else {
            throw ValidationError("--id must be 1 to 200 characters without control characters")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show parked messages (reason, origin, attempts, age, job id, size) without removing them.")

        @OptionGroup var options: Options

        @Option(help: "Show at most this many (1 to 1000000).")
        var limit: Int = 100

        @Flag(help: "Print JSON instead of a table.")
        var json = false

        func validate() throws { try ParkedCommand.validateLimit(limit) }

        func run() async throws {
            let filter = ParkedMessageFilter(reason: options.reason)
            let pass = try await options.withParked(options.resolve()) { try await $0.list(filter, limit: limit) }
            print(json ? try ParkedOutput.json(pass) : ParkedOutput.table(pass.taken, now: ParkedMessages.now()))
            if !json { print(ParkedOutput.summary(pass, verb: "listed")) }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish matching parked messages back to their origin queue (with a confirm), then drop them.")

        @OptionGroup var options: Options

        @Option(help: "Only the message of this job id (or AMQP message id).")
        var id: String?

        @Option(help: "Replay at most this many (1 to 1000000).")
        var limit: Int = 100

        @Flag(
            help: """
                Also replay messages parked as sent but not settled ("sent, but the outcome could not be \
                written"): their notifications went out, and replaying sends them again.
                """)
        var force = false

        func validate() throws {
            try ParkedCommand.validateLimit(limit)
            try ParkedCommand.validateID(id)
        }

        func run() async throws {
            let filter = ParkedMessageFilter(reason: options.reason, id: id)
            let settings = try options.resolve(database: true)
            let logger = ServiceOptions.makeLogger(label: "herald.parked", configuration: settings)
            let database = try DatabaseConfiguration(url: settings.requiredText(.databaseURL))
            let pass = try await Store.withStore(database, logger: logger) { store in
                try await options.withParked(settings) { parked in
                    try await replayParked(
                        filter, limit: limit, force: force, connection: parked.connection, topology: parked.topology,
                        store: store)
                }
            }
            let now = ParkedMessages.now()
            if !pass.taken.isEmpty { print(ParkedOutput.table(pass.taken, now: now)) }
            print(ParkedOutput.summary(pass, verb: "replayed"))
            if !pass.refused.isEmpty {
                print("left parked, since their origin is not one of Herald's work queues:")
                print(ParkedOutput.table(pass.refused, now: now))
            }
            if !pass.unsettled.isEmpty {
                print("left parked, since they were sent but not settled (--force replays them, sending them again):")
                print(ParkedOutput.table(pass.unsettled, now: now))
            }
            if !pass.repeated.isEmpty {
                print("left parked, since this pass took the same message or job already: \(pass.repeated.count)")
            }
        }
    }

    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drop matching parked messages for good, and say how many.")

        @OptionGroup var options: Options

        @Option(help: "Only messages parked at least this long ago: 90m, 12h, 7d.")
        var olderThan: String?

        @Flag(help: "Drop every parked message (up to --limit) when neither --reason nor --older-than is given.")
        var all = false

        @Option(help: "Drop at most this many (1 to 1000000).")
        var limit: Int = 10_000

        func validate() throws {
            try ParkedCommand.validateLimit(limit)
            guard all || options.reason != nil || olderThan != nil else {
                throw ValidationError("say which messages to drop: --reason, --older-than, or --all")
            }
            _ = try olderThan.map(Self.seconds)
        }

        static func seconds(_ text: String) throws -> Int64 {
            guard let age = ConfigurationValue.parsePeriod(text), age <= ConfigurationKey.longestRetention else {
                throw ValidationError(
                    "--older-than must be a whole number with a unit s, m, h or d, such as 7d, up to "
                        + ConfigurationValue.renderPeriod(ConfigurationKey.longestRetention))
            }
            return age.components.seconds
        }

        func run() async throws {
            let seconds = try olderThan.map(Self.seconds)
            let filter = ParkedMessageFilter(reason: options.reason, olderThanSeconds: seconds)
            let pass = try await options.withParked(options.resolve()) { try await $0.purge(filter, limit: limit) }
            print(ParkedOutput.summary(pass, verb: "purged"))
        }
    }
}
