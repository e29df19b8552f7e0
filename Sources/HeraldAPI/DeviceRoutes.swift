import APNSCore
import FCMCore
import HeraldCore
import HeraldStore
import Hummingbird
import WebPushCore

/// `POST /v1/apps/{app}/devices`, `GET` and `DELETE /v1/apps/{app}/devices/{token}`. A device is an iOS one (an
/// APNs token, the default), an Android one (an FCM registration token or installation id, `fcm_kind`) or a web one
/// (a Push API `subscription`, whose endpoint is its token), and its token is held to its platform's rules.
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
        for token in try Self.pathTokens(try context.parameters.decoded("token")) {
            if let device = try await api.store.device(app: app, token: token) {
                return try JSONResponse.make(DeviceView(device))
            }
        }
        throw APIError.notFound("no such device")
    }

    @Sendable func delete(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.admin, app: app)
        for token in try Self.pathTokens(try context.parameters.decoded("token")) {
            if try await api.store.deleteDevice(app: app, token: token) { return Response(status: .noContent) }
        }
        throw APIError.notFound("no such device")
    }

    /// The tokens a path's (percent-decoded) `{token}` may name: valid by either platform's rules, the iOS reading
    /// (lowercase hex) first, then the text as given if it is also an Android token and differs (`AB12…` is an iOS
    /// token `ab12…` or an Android token `AB12…`). A 400 if it is neither, naming both rules, never the token.
    static func pathTokens(_ text: String) throws(APIError) -> [DeviceToken] {
        let candidates = DeviceFields.tokenCandidates(text)
        guard candidates.tokens.isEmpty else { return candidates.tokens }
        throw APIError.badRequest(
            "invalid_token",
            "token: not a device token of any platform: \(candidates.problem ?? "not an iOS device token"), not"
                + " an Android registration token (\(FCMTarget.tokenLengths.lowerBound) to"
                + " \(FCMTarget.tokenLengths.upperBound) characters of A-Z a-z 0-9 _ : -), and not a web"
                + " subscription's endpoint (an https URL, percent-encoded as one path segment)")
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
            if error.code == .platformConflict { throw APIError(.conflict, code: "platform_conflict", error.message) }
            guard error.code == .notOwnDevice else { throw error }
            throw APIError(.forbidden, code: "not_own_device", error.message)
        }
    }

    /// Parses an iOS device token (32 to 200 bytes, `DeviceFields`), answering a 400 that names the rule (never the
    /// token).
    static func token(_ text: String, field: String) throws(APIError) -> DeviceToken {
        try token(text, field: field, platform: .ios)
    }

    /// Parses a device token by its platform's rules (`DeviceFields.token(_:platform:fcmKind:)`), answering a 400
    /// that names the field and the rule (never the token).
    static func token(_ text: String, field: String, platform: DevicePlatform, fcmKind: FCMTarget.Kind? = nil)
        throws(APIError) -> DeviceToken
    {
        do {
            return try DeviceFields.token(text, platform: platform, fcmKind: fcmKind)
        } catch {
            throw APIError.badRequest("invalid_token", "\(field): \(error.message)")
        }
    }
}

/// The registration body. Absent fields keep what is stored; `null` clears.
struct RegistrationBody: Decodable {
    /// Required for iOS and Android; for web, absent or the subscription's endpoint.
    var token: String?
    var oldToken: String?
    var userID: FieldUpdate<String>
    var locale: FieldUpdate<String>
    var topics: FieldUpdate<[String]>
    var environment: FieldUpdate<String>
    /// `ios` (the default), `android` or `web`.
    var platform: String?
    /// For Android: `token` (the default) or `fid`; refused for iOS and web.
    var fcmKind: String?
    /// For web (required there, refused otherwise): `PushSubscription.toJSON()`.
    var subscription: SubscriptionBody?
    /// The backend's proof that the device may be bound to `user_id` (`IdentityToken`), for a register-only key.
    var identityToken: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case token
        case oldToken = "old_token"
        case userID = "user_id"
        case locale, topics, environment, platform
        case fcmKind = "fcm_kind"
        case identityToken = "identity_token"
        case subscription
    }

    init(from decoder: any Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "the device registration")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decodeIfPresent(String.self, forKey: .token)
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
        // Left out means the default; null is not a platform or a kind (unlike the fields null clears).
        if container.contains(.platform), try container.decodeNil(forKey: .platform) {
            throw APIError.badRequest("invalid_field", "platform must be ios, android or web")
        }
        if container.contains(.fcmKind), try container.decodeNil(forKey: .fcmKind) {
            throw APIError.badRequest("invalid_field", "fcm_kind must be token or fid")
        }
        platform = try container.decodeIfPresent(String.self, forKey: .platform)
        fcmKind = try container.decodeIfPresent(String.self, forKey: .fcmKind)
        identityToken = try container.decodeIfPresent(String.self, forKey: .identityToken)
        if container.contains(.subscription), try container.decodeNil(forKey: .subscription) {
            throw APIError.badRequest("invalid_field", "subscription must be an object (PushSubscription.toJSON())")
        }
        subscription = try container.decodeIfPresent(SubscriptionBody.self, forKey: .subscription)
    }

    /// Checks every field; nothing is stored unless all of them pass.
    func validated() throws(APIError) -> DeviceRegistration {
        let platform: DevicePlatform
        switch self.platform {
        case nil, "ios": platform = .ios
        case "android": platform = .android
        case "web": platform = .web
        default: throw APIError.badRequest("invalid_field", "platform must be ios, android or web")
        }
        if platform == .web { return try validatedWeb() }
        guard subscription == nil else {
            throw APIError.badRequest("invalid_field", "subscription is for web devices only (platform web)")
        }
        guard let tokenText = self.token else { throw APIError.badRequest("malformed_json", "missing field token") }
        let kind: FCMTarget.Kind?
        switch (platform, fcmKind) {
        case (.ios, nil): kind = nil
        case (.ios, _):
            throw APIError.badRequest("invalid_field", "fcm_kind is for Android devices only (platform android)")
        case (.android, nil), (.android, "token"): kind = .token
        case (.android, "fid"): kind = .fid
        case (.android, _): throw APIError.badRequest("invalid_field", "fcm_kind must be token or fid")
        case (.web, _):
            throw APIError.badRequest("invalid_field", "fcm_kind is for Android devices only (platform android)")
        }
        let token = try DeviceRoutes.token(tokenText, field: "token", platform: platform, fcmKind: kind)
        // The old token is the same platform's, of either kind for Android (an app moving from registration tokens
        // to installation ids replaces one with the other): an installation id is also a registration token by
        // the rules.
        let old = try oldToken.map { (text) throws(APIError) in
            try DeviceRoutes.token(text, field: "old_token", platform: platform)
        }
        try checkFields()
        return DeviceRegistration(
            token: token, oldToken: old, userID: userID, locale: locale, topics: topics, environment: environment,
            platform: platform, fcmKind: kind
        )
    }

    /// The fields every platform has, by the rules `herald devices import` applies too (DeviceFields).
    func checkFields() throws(APIError) {
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
    /// Nil (left out) for a web device: its token is its endpoint, shown only redacted.
    var token: String?
    var userID: String?
    var locale: String?
    var topics: [String]
    var environment: String?
    var registeredAt: String
    var badge: Int
    var platform: String
    var fcmKind: String?
    /// For a web device: its endpoint redacted and its origin (the push service), and its expiration (ms since
    /// 1970, or null).
    var web: (redacted: String, origin: String, expirationTime: Int64?)?
    var created: Bool?
    var replaced: Bool?

    enum CodingKeys: String, CodingKey {
        case token, locale, topics, environment, badge, platform, created, replaced
        case userID = "user_id"
        case registeredAt = "registered_at"
        case fcmKind = "fcm_kind"
        case endpointOrigin = "endpoint_origin"
        case endpointRedacted = "endpoint_redacted"
        case expirationTime = "expiration_time"
    }

    init(_ device: RegisteredDevice) {
        // A web device's token is its endpoint, a capability URL: shown only redacted (origin and last characters),
        // as it is logged, never in full, and not as `token` (which would not name the device); its keys never.
        token = device.webSubscription == nil ? device.token.hex : nil
        web = device.webSubscription.map { ($0.endpoint.redacted, $0.endpoint.origin, $0.expirationTime) }
        userID = device.userID
        locale = device.locale
        topics = device.topics
        environment = device.environment
        registeredAt = RFC3339Milliseconds.format(device.registeredAt / 1000)
        badge = device.badge
        platform = device.platform.rawValue
        fcmKind = device.fcmKind?.rawValue
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encode(userID, forKey: .userID)
        try container.encode(locale, forKey: .locale)
        try container.encode(topics, forKey: .topics)
        try container.encode(environment, forKey: .environment)
        try container.encode(registeredAt, forKey: .registeredAt)
        try container.encode(badge, forKey: .badge)
        try container.encode(platform, forKey: .platform)
        try container.encode(fcmKind, forKey: .fcmKind)
        if let web {
            try container.encode(web.redacted, forKey: .endpointRedacted)
            try container.encode(web.origin, forKey: .endpointOrigin)
            try container.encode(web.expirationTime, forKey: .expirationTime)
        }
        try container.encodeIfPresent(created, forKey: .created)
        try container.encodeIfPresent(replaced, forKey: .replaced)
    }
}
