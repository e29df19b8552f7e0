import Foundation

/// One app Herald delivers for, as the apps file (`HERALD_APPS_FILE`) describes it.
///
/// Secrets are not held here: `auth` names the files and environment variables they come from.
public struct AppConfiguration: Sendable, Hashable, Codable {
    /// The app id jobs name, usually the bundle id.
    public var id: String
    /// The bundle id used as `apns-topic` (push-type suffixes are added per notification).
    public var topic: String
    /// `production` or `sandbox`: where devices go that registered no environment (or one the app does not serve).
    public var environment: Environment
    /// Every environment the app's devices may be in; nil means `environment` alone. With more than one, each
    /// device is sent to the environment it registered with (`devices.environment`).
    public var environments: [Environment]?
    /// An override of Apple's host for `environment`, e.g. `https://127.0.0.1:2197` for the simulator.
    public var endpoint: String?
    /// Overrides of Apple's host per environment (`{"sandbox": "https://…"}`), for apps with `environments`.
    public var endpoints: [String: String]?
    /// An extra trust root (PEM file) for `endpoint`; certificate verification is never switched off.
    public var caFile: String?
    /// How Herald authenticates to APNs for this app; nil for an app without Apple devices (FCM or Web Push only):
    /// its iOS devices, if any, fail with `NoAPNsCredentials`.
    public var auth: Authentication?
    /// Overrides of `auth` per environment (`{"sandbox": {…}}`), for an app serving both with Apple's
    /// environment-scoped keys: a key made for one environment is refused in the other (BadEnvironmentKeyInToken).
    public var authByEnvironment: [String: Authentication]?
    /// The most notifications per second sent for this app, all its jobs and all workers together; nil is no limit.
    /// Its jobs then all take the throttled path (`throttle_per_second`), at the lower of the two rates.
    public var maxPerSecond: Int?
    /// Whether Herald publishes this app's events (`job.finished.<app>`, `token.pruned.<app>`, …) to the events
    /// exchange; nil is no.
    public var events: Bool?
    /// Where the app's events are also POSTed, signed; an app with one has events whatever `events` says.
    public var webhook: Webhook?
    /// Live Activity settings: channel and broadcast hosts, the priority budget, default dates.
    public var liveActivities: LiveActivitySettings?
    /// Identity tokens: the secret the app's backend signs them with, and whether a register-only key needs one to
    /// bind a device to a user or an activity (``Identity``); nil requires them and has no secret.
    public var identity: Identity?
    /// FCM credentials for the app's Android devices; nil: the app has none (its Android devices are not sent to).
    public var fcm: FCM?
    /// Web Push settings for the app's browser subscriptions; nil: the app has none (its web devices are not sent
    /// to).
    public var webpush: WebPush?

    /// An HTTPS endpoint that receives the app's events (docs/events.md): each POSTed with an HMAC-SHA256
    /// signature made with the secret in `secretFile`, tried again with backoff, and parked when it keeps failing.
    public struct Webhook: Sendable, Hashable, Codable {
        /// `https://host[:port]/path`.
        public var url: String
        /// A file holding the signing secret (16 to 1024 bytes; a final newline is not part of it).
        public var secretFile: String
        /// An extra trust root (PEM file) for `url`; certificate verification is never switched off.
        public var caFile: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case url
            case secretFile = "secret_file"
            case caFile = "ca_file"
        }

        public init(url: String, secretFile: String, caFile: String? = nil) {
            self.url = url
            self.secretFile = secretFile
            self.caFile = caFile
        }
    }

    /// Whether the app's events are written: `events`, or a webhook.
    public var hasEvents: Bool { events == true || webhook != nil }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, topic, environment, environments, endpoint, endpoints
        case caFile = "ca_file"
        case auth
        case authByEnvironment = "auth_by_environment"
        case maxPerSecond = "max_per_second"
        case events
        case webhook
        case liveActivities = "live_activities"
        case identity
        case fcm
        case webpush
    }

    public init(
        id: String,
        topic: String,
        environment: Environment,
        environments: [Environment]? = nil,
        endpoint: String? = nil,
        endpoints: [String: String]? = nil,
        caFile: String? = nil,
        auth: Authentication?,
        authByEnvironment: [String: Authentication]? = nil,
        maxPerSecond: Int? = nil,
        events: Bool? = nil,
        webhook: Webhook? = nil,
        liveActivities: LiveActivitySettings? = nil,
        identity: Identity? = nil,
        fcm: FCM? = nil,
        webpush: WebPush? = nil
    ) {
        self.id = id
        self.topic = topic
        self.environment = environment
        self.environments = environments
        self.endpoint = endpoint
        self.endpoints = endpoints
        self.caFile = caFile
        self.auth = auth
        self.authByEnvironment = authByEnvironment
        self.maxPerSecond = maxPerSecond
        self.events = events
        self.webhook = webhook
        self.liveActivities = liveActivities
        self.identity = identity
        self.fcm = fcm
        self.webpush = webpush
    }

    /// The APNs environment of an app.
    public enum Environment: String, Sendable, Hashable, Codable, CaseIterable {
        case production
        case sandbox
    }

    /// Provider credentials: a token key (.p8) or a certificate bundle (.p12).
    public enum Authentication: Sendable, Hashable, Codable {
        case token(teamID: String, keyID: String, keyFile: String)
        case certificate(p12File: String, passphraseEnv: String?)

        enum CodingKeys: String, CodingKey, CaseIterable {
            case type
            case teamID = "team_id"
            case keyID = "key_id"
            case keyFile = "key_file"
            case p12File = "p12_file"
            case passphraseEnv = "passphrase_env"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch try container.decode(String.self, forKey: .type) {
            case "token":
                self = .token(
                    teamID: try container.decode(String.self, forKey: .teamID),
                    keyID: try container.decode(String.self, forKey: .keyID),
                    keyFile: try container.decode(String.self, forKey: .keyFile)
                )
            case "certificate":
                self = .certificate(
                    p12File: try container.decode(String.self, forKey: .p12File),
                    passphraseEnv: try container.decodeIfPresent(String.self, forKey: .passphraseEnv)
                )
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .type,
                    in: container,
                    debugDescription: "auth.type must be token or certificate"
                )
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .token(let teamID, let keyID, let keyFile):
                try container.encode("token", forKey: .type)
                try container.encode(teamID, forKey: .teamID)
                try container.encode(keyID, forKey: .keyID)
                try container.encode(keyFile, forKey: .keyFile)
            case .certificate(let p12File, let passphraseEnv):
                try container.encode("certificate", forKey: .type)
                try container.encode(p12File, forKey: .p12File)
                try container.encodeIfPresent(passphraseEnv, forKey: .passphraseEnv)
            }
        }
    }

    /// The environments the app's devices are sent to: `environments`, or `environment` alone.
    public var servedEnvironments: [Environment] { environments ?? [environment] }

    /// Whether devices are sent to the environment each registered with (more than one environment served).
    public var sendsPerDeviceEnvironment: Bool { servedEnvironments.count > 1 }

    /// The environment a device is sent to: the one it registered with if the app serves it, else `environment`.
    public func environment(ofDevice registered: String?) -> Environment {
        guard let registered, let parsed = Environment(rawValue: registered), servedEnvironments.contains(parsed)
        else { return environment }
        return parsed
    }

    /// The host and port to connect to for `environment`: its override (`endpoints`, or `endpoint` for the app's
    /// default environment) if set, else Apple's host for the environment on 443.
    public func resolvedEndpoint(
        for environment: Environment? = nil
    ) throws(ConfigurationError) -> (host: String, port: Int) {
        let environment = environment ?? self.environment
        let override =
            endpoints?[environment.rawValue] ?? (environment == self.environment ? endpoint : nil)
        guard let override else {
            return (environment == .production ? "api.push.apple.com" : "api.sandbox.push.apple.com", 443)
        }
        guard let components = URLComponents(string: override), components.scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw ConfigurationError(
                "app \(id): the \(environment.rawValue) endpoint must be an https:// URL with a host")
        }
        return (host, components.port ?? 443)
    }

    /// Checks `environments` and `endpoints` against each other and `environment`.
    func checkEnvironments() throws(ConfigurationError) {
        if let environments {
            guard environments.contains(environment) else {
                throw ConfigurationError(
                    "app \(id): environments must include environment (\(environment.rawValue)), its devices' default")
            }
            guard Set(environments).count == environments.count else {
                throw ConfigurationError("app \(id): environments lists an environment twice")
            }
        }
        for key in (endpoints ?? [:]).keys.sorted() {
            guard let named = Environment(rawValue: key) else {
                throw ConfigurationError("app \(id): endpoints has \(key), which is not production or sandbox")
            }
            guard servedEnvironments.contains(named) else {
                throw ConfigurationError("app \(id): endpoints names \(key), which environments does not list")
            }
        }
        if let endpoint, let same = endpoints?[environment.rawValue], same != endpoint {
            throw ConfigurationError(
                "app \(id): endpoint and endpoints.\(environment.rawValue) disagree; give the override once")
        }
        for served in servedEnvironments { _ = try resolvedEndpoint(for: served) }
        try checkAuthByEnvironment()
    }
}

/// The apps file: `{"apps": [ … ]}`.
public struct AppsFile: Sendable, Hashable, Codable {
    public var apps: [AppConfiguration]

    public init(apps: [AppConfiguration]) { self.apps = apps }

    /// Parses and checks an apps file: valid JSON (else the error names `path`, the line and the column), no field
    /// it does not define (the error names the field and the nearest known one), unique ids, usable endpoints, auth
    /// fields present. Every reader of the apps file (worker, its SIGHUP reload, API, CLI, doctor) comes here.
    public static func parse(_ data: Data, path: String? = nil) throws(ConfigurationError) -> AppsFile {
        try checkFields(try jsonTree(data, path: path))
        let file: AppsFile
        do {
            file = try JSONDecoder().decode(AppsFile.self, from: data)
        } catch let error as DecodingError {
            throw ConfigurationError("apps file is not valid: \(error.sentence(root: "the file"))")
        } catch {
            throw ConfigurationError("apps file\(path.map { " \($0)" } ?? "") is not valid JSON")
        }
        var seen = Set<String>()
        for app in file.apps {
            guard !app.id.isEmpty else { throw ConfigurationError("apps file: an app has an empty id") }
            guard seen.insert(app.id).inserted else {
                throw ConfigurationError("apps file: app \(app.id) is listed twice")
            }
            guard !app.topic.isEmpty else { throw ConfigurationError("app \(app.id): topic is empty") }
            if let rate = app.maxPerSecond, !(1...Int(Int32.max)).contains(rate) {
                throw ConfigurationError("app \(app.id): max_per_second must be 1 to \(Int32.max), not \(rate)")
            }
            try app.checkEnvironments()
            try app.liveActivities?.check(app: app.id)
            try app.identity?.check(app: app.id)
            try app.fcm?.check(app: app.id)
            try app.webpush?.check(app: app.id)
            guard app.auth != nil || app.fcm != nil || app.webpush != nil else {
                throw ConfigurationError(
                    "app \(app.id): no provider credentials: give auth (APNs), fcm (Android), webpush (browsers) or"
                        + " several")
            }
            if let webhook = app.webhook {
                guard let components = URLComponents(string: webhook.url), components.scheme == "https",
                    let host = components.host, !host.isEmpty, components.user == nil, components.password == nil,
                    webhook.url.utf8.count <= 2048
                else {
                    throw ConfigurationError(
                        "app \(app.id): webhook.url must be an https URL with a host and no user info, at most 2048 bytes"
                    )
                }
                guard !app.id.contains("*"), !app.id.contains("#") else {
                    throw ConfigurationError("app \(app.id): an app with a webhook cannot have * or # in its id")
                }
                guard !webhook.secretFile.isEmpty else {
                    throw ConfigurationError("app \(app.id): webhook.secret_file is empty")
                }
            }
        }
        return file
    }

    /// The app with id `id`.
    public func app(_ id: String) -> AppConfiguration? { apps.first { $0.id == id } }

    /// The rate a job of `app` with its own `throttle` (`throttle_per_second`) is sent at: the lower of that and
    /// the app's `max_per_second`; nil if neither is set. The planner sizes and paces the job's batches by it, the
    /// deliverer takes each batch's turn in it, and a job with one is never delivered in a group of small jobs.
    public func sendRate(app id: String, throttle: Int?) -> Int? {
        app(id).map { $0.sendRate(throttle: throttle) } ?? throttle
    }
}

extension AppConfiguration {
    /// The rate a job of this app with its own `throttle` is sent at: the lower of that and `max_per_second`; nil if
    /// neither is set (see ``AppsFile/sendRate(app:throttle:)``).
    public func sendRate(throttle: Int?) -> Int? {
        guard let maxPerSecond else { return throttle }
        return min(throttle ?? maxPerSecond, maxPerSecond)
    }
}

/// A configuration problem, named precisely. Never contains secrets.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
