import APNSChannels
import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCommandLine
import HeraldCore
import HeraldStore
import NIOPosix

/// `herald channels …`: an app's Live Activity broadcast channels, at Apple (with the app's provider token) and
/// as Herald records them.
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Manage an app's Live Activity broadcast channels at Apple and in Herald's records.",
        discussion: """
            Channels are managed in the app's environment (the apps file's environment), at \
            live_activities.channels_endpoint or Apple's host; Apple allows 10,000 per app and environment.
            """,
        subcommands: [
            CreateChannel.self, ListChannels.self, ShowChannel.self, DeleteChannel.self, CollectChannels.self,
        ]
    )
}

/// What every `herald channels` command takes: the database, the app and the apps file.
struct ChannelOptions: ParsableArguments {
    @OptionGroup var services: ServiceOptions

    @Option(help: "The app (its id in the apps file).")
    var app: String

    @OptionGroup var appsFile: AppsFileOptions

    /// Runs `body` with the app's registry: a channel client built from the apps file and a store.
    func withRegistry<T: Sendable>(_ body: (ChannelRegistry) async throws -> T) async throws -> T {
        let logger = services.makeLogger(label: "herald.channels")
        let settings = try services.resolve(
            [.databaseURL, .appsFile], required: [.databaseURL, .appsFile], with: [appsFile])
        let database = try DatabaseConfiguration(url: settings.requiredText(.databaseURL))
        guard let (apps, directory) = try AppsFile.read(settings) else { preconditionFailure("apps.file is required") }
        guard let app = apps.app(self.app) else {
            throw ValidationError("app \(self.app) is not in \(settings.requiredText(.appsFile))")
        }
        let client = try APNSChannelsClient(
            app: app, directory: directory,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        do {
            let result = try await withStore(database, logger: logger) { store in
                try await body(ChannelRegistry(app: app, store: store, client: client))
            }
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

/// `herald channels create --app A [--policy 0|1] [--label L] [--ends-at T]`: prints the new channel's id.
struct CreateChannel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a channel at Apple, record it, and print its id.")

    @OptionGroup var options: ChannelOptions

    @Option(help: "Message storage policy: 0 stores no message (broadcasts need expiration 0), 1 the most recent.")
    var policy: Int = 1

    @Option(help: "A note to tell channels apart (at most 200 bytes).")
    var label: String?

    @Option(help: "When the event ends (RFC 3339); herald channels gc deletes the channel after it.")
    var endsAt: String?

    func validate() throws {
        guard ChannelStoragePolicy(rawValue: policy) != nil else { throw ValidationError("--policy must be 0 or 1") }
        if let label, let problem = ActivityChannel.labelProblem(label) { throw ValidationError("--label: \(problem)") }
        if let endsAt, RFC3339.milliseconds(endsAt) == nil {
            throw ValidationError("--ends-at must be an RFC 3339 date-time, e.g. 2026-11-21T22:00:00Z")
        }
    }

    func run() async throws {
        let policy = ChannelStoragePolicy(rawValue: self.policy)!
        let endsAt = self.endsAt.flatMap(RFC3339.milliseconds).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        let label = self.label
        let channel = try await options.withRegistry { registry in
            try await registry.create(policy: policy, label: label, endsAt: endsAt)
        }
        print(channel.id)
    }
}

/// `herald channels list --app A [--apple]`.
struct ListChannels: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the app's recorded channels; with --apple, beside Apple's list, marking ids one side lacks.")

    @OptionGroup var options: ChannelOptions

    @Flag(help: "Also ask Apple for its list of the app's channels in the app's environment.")
    var apple = false

    func run() async throws {
        let apple = self.apple
        let (recorded, atApple) = try await options.withRegistry {
            (registry) async throws -> ([ActivityChannel], [String]?) in
            let recorded = try await registry.store.channels(app: registry.app.id)
            return (recorded, apple ? try await registry.client.listChannels() : nil)
        }
        print(ChannelTable.render(recorded: recorded, atApple: atApple), terminator: "")
    }
}

/// `herald channels show --app A ID`.
struct ShowChannel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Print a channel's record and what Apple says of it.")

    @OptionGroup var options: ChannelOptions

    @Argument(help: "The channel id.")
    var id: String

    /// What Apple said of the channel.
    enum AppleView: Sendable {
        case policy(ChannelStoragePolicy)
        case notRegistered
        /// The record is of another environment than the one the app's requests now go to.
        case notAsked
    }

    func run() async throws {
        let id = self.id
        let (record, environment, apple) = try await options.withRegistry {
            (registry) async throws -> (ActivityChannel?, String, AppleView) in
            let record = try await registry.store.channel(app: registry.app.id, id: id)
            if let record, record.environment != registry.environment {
                return (record, registry.environment, AppleView.notAsked)
            }
            let policy = try await registry.client.channelPolicy(id: id)
            let view = policy.map { AppleView.policy($0) } ?? AppleView.notRegistered
            return (record, registry.environment, view)
        }
        print(record.map(ChannelTable.describe) ?? "channel \(id): not recorded by Herald")
        switch apple {
        case .policy(let policy):
            print("at Apple (\(environment)): storage policy \(policy.rawValue)")
        case .notRegistered:
            print("at Apple (\(environment)): not registered")
            if record == nil { throw ValidationError("neither Herald nor Apple knows channel \(id)") }
        case .notAsked:
            print("at Apple: not asked (the channel is in \(record?.environment ?? "?"), the app is in \(environment))")
        }
    }
}

/// `herald channels delete --app A ID`.
struct DeleteChannel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete a channel at Apple, then its record (a channel Apple no longer knows loses its record too).")

    @OptionGroup var options: ChannelOptions

    @Argument(help: "The channel id.")
    var id: String

    func run() async throws {
        let id = self.id
        let deletion = try await options.withRegistry { registry in try await registry.delete(id: id) }
        switch (deletion.atApple, deletion.recorded) {
        case (true, true): print("channel \(id) deleted at Apple and its record removed")
        case (true, false): print("channel \(id) deleted at Apple (Herald had no record of it)")
        case (false, true): print("channel \(id) was no longer at Apple; its record removed")
        case (false, false): throw ValidationError("neither Herald nor Apple knows channel \(id)")
        }
    }
}

/// `herald channels gc --app A [--dry-run]`: deletes the channels whose event ended.
struct CollectChannels: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc", abstract: "Delete the app's channels whose ends_at has passed, at Apple and in the records.")

    @OptionGroup var options: ChannelOptions

    @Flag(help: "Only list the channels that would be deleted.")
    var dryRun = false

    func run() async throws {
        let dryRun = self.dryRun
        let failures = try await options.withRegistry { (registry) async throws -> Int in
            if dryRun {
                let ended = try await registry.store.endedChannels(
                    app: registry.app.id, before: HeraldClock.system.date)
                for channel in ended { print("would delete \(ChannelTable.describe(channel))") }
                return 0
            }
            var failures = 0
            for collected in try await registry.collectGarbage() {
                switch collected.result {
                case .success: print("deleted \(ChannelTable.describe(collected.channel))")
                case .failure(let error):
                    failures += 1
                    print("kept \(collected.channel.id): \(error)")
                }
            }
            return failures
        }
        if failures > 0 { throw ValidationError("\(failures) ended channel(s) could not be deleted; run gc again") }
    }
}
