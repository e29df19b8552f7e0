import APNSChannels
import Foundation
import HeraldCore
import HeraldStore
import Logging

/// An app's broadcast channels at Apple and in the store together, as `herald channels` and the API's channel
/// routes change them: Apple first, then the record.
public struct ChannelRegistry: Sendable {
    /// The app, as the apps file describes it: its `environment` is where its channels are managed.
    public let app: AppConfiguration
    public let store: Store
    public let client: APNSChannelsClient

    public init(app: AppConfiguration, store: Store, client: APNSChannelsClient) {
        self.app = app
        self.store = store
        self.client = client
    }

    /// The environment the client manages channels in.
    public var environment: String { app.environment.rawValue }

    /// Creates a channel at Apple and records it. The app's recorded channels in the environment are counted
    /// first: at Apple's limit, nothing is asked of Apple and the error is the one Apple's CannotCreateChannelConfig
    /// gives. A channel Apple created but the store could not record is deleted at Apple again, so that no
    /// channel counts against the limit unseen.
    public func create(policy: ChannelStoragePolicy, label: String?, endsAt: Date?) async throws -> ActivityChannel {
        if let label, let problem = ActivityChannel.labelProblem(label) { throw ConfigurationError(problem) }
        let count = try await store.channelCount(app: app.id, environment: environment)
        guard count < APNSChannelsError.channelLimit else { throw APNSChannelsError.quotaReached() }
        let id = try await client.createChannel(storagePolicy: policy)
        let channel = ActivityChannel(
            app: app.id, id: id, environment: environment, storagePolicy: policy.rawValue, label: label,
            endsAt: endsAt)
        do {
            try await store.recordChannel(channel)
        } catch {
            try? await client.deleteChannel(id: id)
            throw error
        }
        return try await store.channel(app: app.id, id: id) ?? channel
    }

    /// What deleting a channel found.
    public struct Deletion: Sendable, Hashable {
        /// Whether Apple had the channel (false: it answered ChannelNotRegistered).
        public var atApple: Bool
        /// Whether Herald recorded it.
        public var recorded: Bool

        public init(atApple: Bool, recorded: Bool) {
            self.atApple = atApple
            self.recorded = recorded
        }
    }

    /// Deletes channel `id` at Apple, then its record. A channel Apple no longer knows (ChannelNotRegistered) still
    /// loses its record; one recorded in another environment than the app's is refused, since Apple's answer
    /// about it would come from the wrong environment.
    public func delete(id: String) async throws -> Deletion {
        let record = try await store.channel(app: app.id, id: id)
        if let record, record.environment != environment {
            throw ConfigurationError(
                "channel \(id) was created in \(record.environment), but the apps file now manages app \(app.id) in "
                    + "\(environment); set the app's environment back to delete it")
        }
        let atApple: Bool
        do {
            try await client.deleteChannel(id: id)
            atApple = true
        } catch {
            guard error.reason == ChannelReason.channelNotRegistered else { throw error }
            atApple = false
        }
        let recorded = try await store.deleteChannelRecord(app: app.id, id: id)
        return Deletion(atApple: atApple, recorded: recorded || record != nil)
    }

    /// What collecting one ended channel came to.
    public struct Collected: Sendable {
        public var channel: ActivityChannel
        /// The deletion, or why it failed (the channel stays recorded and is tried again next time).
        public var result: Result<Deletion, any Error>
    }

    /// Deletes every channel of the app in its environment whose event ended before `now`, one by one: a failure
    /// leaves that channel recorded and goes on with the next.
    public func collectGarbage(now: Date = HeraldClock.system.date) async throws -> [Collected] {
        var collected: [Collected] = []
        for channel in try await store.endedChannels(app: app.id, before: now) where channel.environment == environment
        {
            do {
                collected.append(Collected(channel: channel, result: .success(try await delete(id: channel.id))))
            } catch {
                collected.append(Collected(channel: channel, result: .failure(error)))
            }
        }
        return collected
    }
}
