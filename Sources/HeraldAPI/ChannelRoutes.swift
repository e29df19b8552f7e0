import APNSChannels
import Foundation
import HeraldCore
import HeraldStore
import Hummingbird

/// Live Activity broadcast channels: `POST` and `GET /v1/apps/{app}/channels`, `GET` and
/// `DELETE /v1/apps/{app}/channels/{id}`. Creating and deleting go to Apple's channel API with the app's provider
/// token (`ChannelRegistry`), so the API needs the apps file (`herald api --apps-file`); without it every channel
/// route answers 503.
struct ChannelRoutes: Sendable {
    let api: API
    let settings: ChannelSettings?

    init(api: API) {
        self.api = api
        self.settings = api.configuration.apps.map {
            ChannelSettings(apps: $0, directory: api.configuration.appsDirectory)
        }
    }

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("apps/{app}/channels", use: create)
        group.get("apps/{app}/channels", use: list)
        group.get("apps/{app}/channels/{id}", use: show)
        group.delete("apps/{app}/channels/{id}", use: delete)
    }

    @Sendable func create(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.admin, app: app)
        let settings = try available()
        let body = try await request.decodeJSON(ChannelBody.self, limit: 16 * 1024)
        let (policy, label, endsAt) = try body.validated(
            now: Date(timeIntervalSince1970: api.configuration.clock.unixTime()))
        let channel = try await Self.mapping {
            try await settings.withRegistry(app: app, store: api.store, logger: context.logger) { registry in
                try await registry.create(policy: policy, label: label, endsAt: endsAt)
            }
        }
        return try JSONResponse.make(ChannelView(channel), status: .created)
    }

    @Sendable func list(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.read, app: app)
        _ = try available()
        let channels = try await api.store.channels(app: app)
        return try JSONResponse.make(ChannelList(channels: channels.map(ChannelView.init)))
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.read, app: app)
        _ = try available()
        let id = try Self.channelID(try context.parameters.decoded("id"))
        guard let channel = try await api.store.channel(app: app, id: id) else {
            throw APIError.notFound("no such channel")
        }
        return try JSONResponse.make(ChannelView(channel))
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.admin, app: app)
        let settings = try available()
        let id = try Self.channelID(try context.parameters.decoded("id"))
        let deletion = try await Self.mapping {
            try await settings.withRegistry(app: app, store: api.store, logger: context.logger) { registry in
                try await registry.delete(id: id)
            }
        }
        guard deletion.atApple || deletion.recorded else { throw APIError.notFound("no such channel") }
        return Response(status: .noContent)
    }

    /// The settings, or the 503 of an API started without an apps file.
    private func available() throws(APIError) -> ChannelSettings {
        guard let settings else {
            throw APIError(
                .serviceUnavailable, code: "channels_unavailable",
                "this API has no apps file, so it cannot reach Apple's channel API: start it with herald api "
                    + "--apps-file (or HERALD_APPS_FILE)")
        }
        return settings
    }

    /// A channel id from the path (percent-decoded), checked before Apple or PostgreSQL is asked: standard base64
    /// with its padding, at most 200 characters (`ChannelID`).
    static func channelID(_ text: String) throws(APIError) -> String {
        guard ChannelID.isValid(text) else {
            throw APIError.badRequest(
                "invalid_channel_id",
                "the channel id is not a channel id (standard base64 with its padding, at most "
                    + "\(ChannelID.maximumCharacters) characters)")
        }
        return text
    }

    /// Runs `body`, answering Apple's refusals and the registry's errors with the API's error shape.
    static func mapping<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as APNSChannelsError {
            if error.isQuotaReached { throw APIError(.conflict, code: "channel_quota", error.description) }
            if error.isTransient {
                throw APIError(.serviceUnavailable, code: "apns_unavailable", error.description, retryAfter: 5)
            }
            throw APIError(.badGateway, code: "apns_refused", error.description)
        } catch let error as ConfigurationError {
            throw APIError(.conflict, code: "channel_conflict", error.message)
        }
    }
}

/// The body of `POST /v1/apps/{app}/channels`.
struct ChannelBody: Decodable {
    var storagePolicy: Int?
    var label: String?
    var endsAt: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case storagePolicy = "storage_policy"
        case label
        case endsAt = "ends_at"
    }

    init(from decoder: any Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "the channel")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storagePolicy = try container.decodeIfPresent(Int.self, forKey: .storagePolicy)
        label = try container.decodeIfPresent(String.self, forKey: .label)
        endsAt = try container.decodeIfPresent(String.self, forKey: .endsAt)
    }

    /// The policy (default 1, most recent message stored), the label and the end, checked.
    func validated(now: Date) throws(APIError) -> (ChannelStoragePolicy, String?, Date?) {
        guard let policy = ChannelStoragePolicy(rawValue: storagePolicy ?? 1) else {
            throw APIError.badRequest(
                "invalid_field", "storage_policy must be 0 (no message stored) or 1 (most recent)")
        }
        if let label, let problem = ActivityChannel.labelProblem(label) {
            throw APIError.badRequest("invalid_field", problem)
        }
        var end: Date? = nil
        if let endsAt {
            guard let milliseconds = RFC3339.milliseconds(endsAt) else {
                throw APIError.badRequest("invalid_field", "ends_at is not an RFC 3339 date-time")
            }
            end = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            guard end! > now else { throw APIError.badRequest("invalid_field", "ends_at is in the past") }
        }
        return (policy, label, end)
    }
}

/// A channel as the API shows it.
struct ChannelView: Encodable {
    var id: String
    var app: String
    var environment: String
    var storagePolicy: Int
    var label: String?
    var endsAt: String?
    var createdAt: String

    enum CodingKeys: String, CodingKey {
        case id, app, environment, label
        case storagePolicy = "storage_policy"
        case endsAt = "ends_at"
        case createdAt = "created_at"
    }

    init(_ channel: ActivityChannel) {
        id = channel.id
        app = channel.app
        environment = channel.environment
        storagePolicy = channel.storagePolicy
        label = channel.label
        endsAt = channel.endsAt.map { RFC3339Milliseconds.format(Int64(($0.timeIntervalSince1970 * 1000).rounded())) }
        createdAt = RFC3339Milliseconds.format(Int64((channel.createdAt.timeIntervalSince1970 * 1000).rounded()))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(app, forKey: .app)
        try container.encode(environment, forKey: .environment)
        try container.encode(storagePolicy, forKey: .storagePolicy)
        try container.encode(label, forKey: .label)
        try container.encode(endsAt, forKey: .endsAt)
        try container.encode(createdAt, forKey: .createdAt)
    }
}

/// `GET /v1/apps/{app}/channels`.
struct ChannelList: Encodable {
    var channels: [ChannelView]
}
