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
        // A register-only key binds a user only with the backend's identity token for the token it registers, or
        // when that token is bound to the user already. A replacement (`old_token`) that keeps the old token's user
        // binds the new token to it, so it needs the same proof: else anyone who learnt another install's token
        // could move that user's notifications to a token of their own.
        let (store, token) = (api.store, registration.token)
        var bound: String? = nil
        if case .set(let user) = registration.userID {
            bound = user
        } else if case .keep = registration.userID, key.registersOnly, let old = registration.oldToken,
            let owner = try await store.deviceOwner(app: app, token: old), owner.registeredBy == key.id
        {
            // (A device this key did not register is refused as not its own by the registration itself.)
            bound = owner.userID
        }
        if let user = bound {
            try await api.checkBinding(
                .user(user), device: token, token: body.identityToken, app: app, key: key
            ) { try await store.device(app: app, token: token)?.userID == user }
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

    /// Parses a device token (32 to 200 bytes, `DeviceFields`), answering a 400 that names the rule (never the
    /// token).
    static func token(_ text: String, field: String) throws(APIError) -> DeviceToken {
        do {
            return try DeviceFields.token(text, kind: .device)
        } catch {
            throw APIError.badRequest("invalid_token", "\(field): \(error.message)")
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

    enum CodingKeys: String, CodingKey, CaseIterable {
        case token
        case oldToken = "old_token"
        case userID = "user_id"
        case locale, topics, environment
        case identityToken = "identity_token"
    }

    init(from decoder: any Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "the device registration")
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
        // The rules `herald devices import` applies too (DeviceFields).
        if case .set(let user) = userID, let problem = DeviceFields.userIDProblem(user) {
            throw APIError.badRequest("invalid_field", problem)
        }
        if case .set(let locale) = locale, let problem = DeviceFields.localeProblem(locale) {
            throw APIError.badRequest("invalid_field", problem)
        }
        if case .set(let topics) = topics {
            guard topics.count <= DeviceFields.maximumTopics else {
                throw APIError.badRequest("invalid_field", "topics has more than 100 entries")
            }
            for topic in topics {
                if let problem = DeviceFields.topicProblem(topic) {
                    throw APIError.badRequest("invalid_field", problem)
                }
            }
        }
        if case .set(let environment) = environment, environment != "production", environment != "sandbox" {
            throw APIError.badRequest("invalid_field", "environment must be production or sandbox")
        }
        return DeviceRegistration(
            token: token, oldToken: old, userID: userID, locale: locale, topics: topics, environment: environment
        )
    }

    /// 1 to `maximum` characters (Unicode scalars, as the schemas' maxLength counts them), no control character
    /// (C0, DEL, C1: the job validator's rule, so that what is registered can be targeted).
    static func check(_ value: String, field: String, maximum: Int) throws(APIError) {
        guard !value.isEmpty else { throw APIError.badRequest("invalid_field", "\(field) is empty") }
        guard value.unicodeScalars.count <= maximum else {
            throw APIError.badRequest("invalid_field", "\(field) is longer than \(maximum) characters")
        }
        // Control characters (NUL cannot even be stored) would break the CSV export; everything else, quotes and
        // SQL-looking text included, is stored verbatim through bound parameters.
        guard !JobLimits.hasControlCharacter(value) else {
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
