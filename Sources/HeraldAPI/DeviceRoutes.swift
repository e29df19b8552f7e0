import APNSCore
import HeraldCore
import HeraldStore
import Hummingbird

/// `POST /v1/apps/{app}/devices`, `GET` and `DELETE /v1/apps/{app}/devices/{token}`.
struct DeviceRoutes: Sendable {
    let api: API

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("apps/{app}/devices", use: register)
        group.get("apps/{app}/devices/{token}", use: show)
        group.delete("apps/{app}/devices/{token}", use: delete)
    }

    /// Registers or refreshes a device; with `old_token`, replaces the device's previous token.
    @Sendable func register(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        let key = try context.require(.register, app: app)
        let body = try await request.decodeJSON(RegistrationBody.self, limit: api.configuration.maximumBodySize)
        var registration = try body.validated()
        if case .set(let user) = registration.userID {
            // A register-only key binds a user only with the backend's identity token (or repeating the binding).
            let (store, token, old) = (api.store, registration.token, registration.oldToken)
            try await api.checkBinding(
                .user(user), device: registration.token, token: body.identityToken, app: app, key: key
            ) {
                for candidate in [token] + (old.map { [$0] } ?? []) {
                    if try await store.device(app: app, token: candidate)?.userID == user { return true }
                }
                return false
            }
        }
        registration.devicesPerHour = api.devicesPerHour(of: key)
        let result = try await Self.register(registration, app: app, key: key, store: api.store)
        var view = DeviceView(result.device)
        view.created = result.created
        view.replaced = result.replaced
        return try JSONResponse.make(view, status: result.created ? .created : .ok)
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.read, app: app)
        let token = try Self.token(try context.parameters.decoded("token"), field: "token")
        guard let device = try await api.store.device(app: app, token: token) else {
            throw APIError.notFound("no such device")
        }
        return try JSONResponse.make(DeviceView(device))
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.admin, app: app)
        let token = try Self.token(try context.parameters.decoded("token"), field: "token")
        guard try await api.store.deleteDevice(app: app, token: token) else {
            throw APIError.notFound("no such device")
        }
        return Response(status: .noContent)
    }

    /// Registers with the caller's key: a key that may only register is limited to the devices it registered
    /// itself, and is refused (403 `not_own_device`) any other.
    static func register(_ registration: DeviceRegistration, app: String, key: AuthenticatedKey, store: Store)
        async throws -> RegistrationResult
    {
        var registration = registration
        if key.registersOnly { registration.registeredBy = key.id }
        do {
            return try await store.register(registration, app: app)
        } catch {
            if error.code == .quotaExceeded { throw APIError.quotaExceeded(error) }
            guard error.code == .notOwnDevice else { throw error }
            throw APIError(.forbidden, code: "not_own_device", error.message)
        }
    }

    /// Parses a token, answering a 400 that names the rule (never the token).
    static func token(_ text: String, field: String) throws(APIError) -> DeviceToken {
        do {
            return try DeviceToken(parsing: text)
        } catch {
            throw APIError.badRequest("invalid_token", "\(field): \(error.description)")
        }
    }
}

/// The registration body. Absent fields keep what is stored; `null` clears.
struct RegistrationBody: Decodable {
    var token: String
    var oldToken: String?
    var userID: FieldUpdate<String>
    var locale: FieldUpdate<String>
    var topics: FieldUpdate<[String]>
    var environment: FieldUpdate<String>
    /// The backend's proof that the device may be bound to `user_id` (`IdentityToken`), for a register-only key.
    var identityToken: String?

    enum CodingKeys: String, CodingKey {
        case token
        case oldToken = "old_token"
        case userID = "user_id"
        case locale, topics, environment
        case identityToken = "identity_token"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        oldToken = try container.decodeIfPresent(String.self, forKey: .oldToken)
        func update<T: Decodable>(_ key: CodingKeys) throws -> FieldUpdate<T> {
            guard container.contains(key) else { return .keep }
            if try container.decodeNil(forKey: key) { return .clear }
            return .set(try container.decode(T.self, forKey: key))
        }
        userID = try update(.userID)
        locale = try update(.locale)
        topics = try update(.topics)
        environment = try update(.environment)
        identityToken = try container.decodeIfPresent(String.self, forKey: .identityToken)
    }

    /// Checks every field; nothing is stored unless all of them pass.
    func validated() throws(APIError) -> DeviceRegistration {
        let token = try DeviceRoutes.token(self.token, field: "token")
        let old = try oldToken.map { (text) throws(APIError) in try DeviceRoutes.token(text, field: "old_token") }
        if case .set(let user) = userID {
            try Self.check(user, field: "user_id", maximumBytes: 256)
        }
        if case .set(let locale) = locale {
            try Self.check(locale, field: "locale", maximumBytes: 35)
            guard locale.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw APIError.badRequest("invalid_field", "locale is not a BCP 47 tag")
            }
        }
        if case .set(let topics) = topics {
            guard topics.count <= 100 else {
                throw APIError.badRequest("invalid_field", "topics has more than 100 entries")
            }
            for topic in topics {
                try Self.check(topic, field: "topics", maximumBytes: 128)
                // `;` separates topics in the devices CSV.
                guard !topic.contains(";") else { throw APIError.badRequest("invalid_field", "a topic contains ;") }
            }
        }
        if case .set(let environment) = environment, environment != "production", environment != "sandbox" {
            throw APIError.badRequest("invalid_field", "environment must be production or sandbox")
        }
        return DeviceRegistration(
            token: token, oldToken: old, userID: userID, locale: locale, topics: topics, environment: environment
        )
    }

    static func check(_ value: String, field: String, maximumBytes: Int) throws(APIError) {
        guard !value.isEmpty else { throw APIError.badRequest("invalid_field", "\(field) is empty") }
        guard value.utf8.count <= maximumBytes else {
            throw APIError.badRequest("invalid_field", "\(field) is longer than \(maximumBytes) bytes")
        }
        // Control characters (NUL cannot even be stored) would break the CSV export; everything else, quotes and
        // SQL-looking text included, is stored verbatim through bound parameters.
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw APIError.badRequest("invalid_field", "\(field) contains a control character")
        }
    }
}

/// A device as the API shows it.
struct DeviceView: Encodable {
    var token: String
    var userID: String?
    var locale: String?
    var topics: [String]
    var environment: String?
    var registeredAt: String
    var badge: Int
    var created: Bool?
    var replaced: Bool?

    enum CodingKeys: String, CodingKey {
        case token, locale, topics, environment, badge, created, replaced
        case userID = "user_id"
        case registeredAt = "registered_at"
    }

    init(_ device: RegisteredDevice) {
        token = device.token.hex
        userID = device.userID
        locale = device.locale
        topics = device.topics
        environment = device.environment
        registeredAt = RFC3339Milliseconds.format(device.registeredAt / 1000)
        badge = device.badge
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encode(userID, forKey: .userID)
        try container.encode(locale, forKey: .locale)
        try container.encode(topics, forKey: .topics)
        try container.encode(environment, forKey: .environment)
        try container.encode(registeredAt, forKey: .registeredAt)
        try container.encode(badge, forKey: .badge)
        try container.encodeIfPresent(created, forKey: .created)
        try container.encodeIfPresent(replaced, forKey: .replaced)
    }
}
