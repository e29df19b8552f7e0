import ArgumentParser
import HeraldAPI
import HeraldCommandLine
import HeraldStore

/// `herald keys …`: per-app API keys. Only a key's SHA-256 is stored; the key is printed once.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage the API keys of apps.",
        subcommands: [CreateKey.self, ListKeys.self, RevokeKey.self]
    )
}

/// `herald keys create --app A --scope S…`: prints a new key once, as the last word of its output.
struct CreateKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an API key for an app and print it once (as the last word); only its hash is stored."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app the key is for.")
    var app: String

    @Option(help: "A note to tell keys apart (e.g. the service that uses it).")
    var label: String?

    @Option(
        name: .customLong("scope"),
        help: """
            What the key may do (repeat for several): register (add and refresh its own devices: the key to embed \
            in an app), send (notifications; cancel jobs), read (devices, jobs, reports), admin (everything). \
            Required: there is no default, so that no key is an admin key by omission.
            """)
    var scopes: [String] = []

    @Option(
        help: """
            The key's API rate limit, in requests a second in each API process (default: none; a register-only key \
            takes api.register_requests_per_second).
            """)
    var requestsPerSecond: Int?

    @Option(help: "New devices a register-only key may register per hour (default: api.register_devices_per_hour).")
    var devicesPerHour: Int?

    @Option(
        help: """
            Live Activity update tokens a register-only key may register per device \
            (default: api.activity_tokens_per_device).
            """)
    var activityTokensPerDevice: Int?

    @OptionGroup var appsFile: AppsFileOptions

    func validate() throws {
        guard !app.isEmpty else { throw ValidationError("--app must not be empty") }
        guard !scopes.isEmpty else {
            throw ValidationError(
                "--scope is required: name what the key may do, register, send, read or admin (repeat for several); "
                    + "there is no default, so that no key is an admin key by omission")
        }
        for scope in scopes where APIScope(rawValue: scope) == nil {
            throw ValidationError(
                "--scope \(scope.prefix(40)) is not a scope; use register, send, read or admin")
        }
        if let requestsPerSecond, !(1...1_000_000).contains(requestsPerSecond) {
            throw ValidationError("--requests-per-second must be between 1 and 1000000")
        }
        if let devicesPerHour, !(0...100_000_000).contains(devicesPerHour) {
            throw ValidationError("--devices-per-hour must be between 0 and 100000000")
        }
        if let activityTokensPerDevice, !(0...100_000).contains(activityTokensPerDevice) {
            throw ValidationError("--activity-tokens-per-device must be between 0 and 100000")
        }
    }

    func run() async throws {
        let logger = services.makeLogger(label: "herald.keys")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        try KnownApps(services.resolve([.appsFile], with: [appsFile])).check(app)
        let key = APIKey.generate()
        let (app, label, rate) = (self.app, self.label, self.requestsPerSecond)
        let (devices, activityTokens) = (devicesPerHour, activityTokensPerDevice)
        let scopes = Set(scopes.compactMap(APIScope.init(rawValue:)))
        let id = try await withStore(database, logger: logger) { store in
            try await store.createAPIKey(
                app: app, hash: APIKey.hash(key), prefix: APIKey.prefix(key), label: label, scopes: scopes,
                requestsPerSecond: rate, devicesPerHour: devices, activityTokensPerDevice: activityTokens)
        }
        let named = scopes.sorted().map(\.rawValue).joined(separator: ",")
        print("API key \(id) for app \(app), scopes \(named) (shown once; only its hash is stored):")
        print(key)
    }
}

/// `herald keys list [--app A]`.
struct ListKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List API keys (prefixes only).")

    @OptionGroup var services: ServiceOptions

    @Option(help: "Only this app's keys.")
    var app: String?

    func run() async throws {
        let logger = services.makeLogger(label: "herald.keys")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let app = self.app
        let keys = try await withStore(database, logger: logger) { store in try await store.apiKeys(app: app) }
        let rows = keys.map { key in
            [
                String(key.id), key.app, key.prefix + "…", key.scopes.sorted().map(\.rawValue).joined(separator: ","),
                key.requestsPerSecond.map { "\($0)/s" } ?? "", key.label ?? "",
                RFC3339Milliseconds.format(key.createdAt / 1000), key.revoked ? "revoked" : "active",
            ]
        }
        print(
            ReportRendering.table(["id", "app", "key", "scopes", "rate", "label", "created", "status"], rows),
            terminator: "")
    }
}

/// `herald keys revoke --app A --id N`.
struct RevokeKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke an API key.")

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app the key belongs to.")
    var app: String

    @Option(help: "The key's id (from herald keys list).")
    var id: Int64

    func run() async throws {
        let logger = services.makeLogger(label: "herald.keys")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let (app, id) = (self.app, self.id)
        let revoked = try await withStore(database, logger: logger) { store in
            try await store.revokeAPIKey(id: id, app: app)
        }
        guard revoked else { throw ValidationError("no active key \(id) for app \(app)") }
        print("API key \(id) of app \(app) revoked")
    }
}
