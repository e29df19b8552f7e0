import Foundation

/// One app Herald delivers for, as the apps file (`HERALD_APPS_FILE`) describes it.
///
/// Secrets are not held here: `auth` names the files and environment variables they come from.
public struct AppConfiguration: Sendable, Hashable, Codable {
    /// The app id jobs name, usually the bundle id.
    public var id: String
    /// The bundle id used as `apns-topic` (push-type suffixes are added per notification).
    public var topic: String
    /// `production` or `sandbox`.
    public var environment: Environment
    /// An override of Apple's host, e.g. `https://127.0.0.1:2197` for the simulator.
    public var endpoint: String?
    /// An extra trust root (PEM file) for `endpoint`; certificate verification is never switched off.
    public var caFile: String?
    /// How Herald authenticates to APNs for this app.
    public var auth: Authentication

    enum CodingKeys: String, CodingKey {
        case id, topic, environment, endpoint
        case caFile = "ca_file"
        case auth
    }

    public init(
        id: String,
        topic: String,
        environment: Environment,
        endpoint: String? = nil,
        caFile: String? = nil,
        auth: Authentication
    ) {
        self.id = id
        self.topic = topic
        self.environment = environment
        self.endpoint = endpoint
        self.caFile = caFile
        self.auth = auth
    }

    /// The APNs environment of an app.
    public enum Environment: String, Sendable, Hashable, Codable {
        case production
        case sandbox
    }

    /// Provider credentials: a token key (.p8) or a certificate bundle (.p12).
    public enum Authentication: Sendable, Hashable, Codable {
        case token(teamID: String, keyID: String, keyFile: String)
        case certificate(p12File: String, passphraseEnv: String?)

        enum CodingKeys: String, CodingKey {
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

    /// The host and port to connect to: `endpoint` if set, else Apple's host for the environment on 443.
    public func resolvedEndpoint() throws(ConfigurationError) -> (host: String, port: Int) {
        guard let endpoint else {
            return (environment == .production ? "api.push.apple.com" : "api.sandbox.push.apple.com", 443)
        }
        guard let components = URLComponents(string: endpoint), components.scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw ConfigurationError("app \(id): endpoint must be an https:// URL with a host")
        }
        return (host, components.port ?? 443)
    }
}

/// The apps file: `{"apps": [ … ]}`.
public struct AppsFile: Sendable, Hashable, Codable {
    public var apps: [AppConfiguration]

    public init(apps: [AppConfiguration]) { self.apps = apps }

    /// Parses and checks an apps file: unique ids, usable endpoints, auth fields present.
    public static func parse(_ data: Data) throws(ConfigurationError) -> AppsFile {
        let file: AppsFile
        do {
            file = try JSONDecoder().decode(AppsFile.self, from: data)
        } catch {
            throw ConfigurationError("apps file is not valid: \(error)")
        }
        var seen = Set<String>()
        for app in file.apps {
            guard !app.id.isEmpty else { throw ConfigurationError("apps file: an app has an empty id") }
            guard seen.insert(app.id).inserted else {
                throw ConfigurationError("apps file: app \(app.id) is listed twice")
            }
            guard !app.topic.isEmpty else { throw ConfigurationError("app \(app.id): topic is empty") }
            _ = try app.resolvedEndpoint()
        }
        return file
    }

    /// The app with id `id`.
    public func app(_ id: String) -> AppConfiguration? { apps.first { $0.id == id } }
}

/// A configuration problem, named precisely. Never contains secrets.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
