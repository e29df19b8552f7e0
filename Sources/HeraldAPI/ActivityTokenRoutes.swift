import APNSCore
import HeraldCore
import HeraldStore
import Hummingbird

/// The Live Activity token registry: a device's push-to-start tokens (per activity type) and the update tokens of
/// running activities (per activity id and device).
///
/// - `POST /v1/apps/{app}/devices/{token}/live-activities/push-to-start`, `{"activity_type", "token"}`: 201, 200;
/// - `DELETE /v1/apps/{app}/devices/{token}/live-activities/push-to-start/{activity_type}`: 204;
/// - `PUT /v1/apps/{app}/live-activities/{activity_id}/devices/{token}`, `{"token"}`: 201, 200 (`replaced`);
/// - `DELETE /v1/apps/{app}/live-activities/{activity_id}/devices/{token}`: 204;
/// - `GET /v1/apps/{app}/live-activities/{activity_id}`: how many devices follow the activity.
///
/// Writes need the register scope, with a register-only key limited to the devices it registered (403
/// `not_own_device`, as for devices); the device must be registered for the app (404 `device_not_registered`).
/// Activity tokens are never echoed: not in answers, not in errors.
struct ActivityTokenRoutes: Sendable {
    let api: API

    /// The largest body these routes read: a token of 200 bytes and a name of 200, JSON-escaped, fit many times.
    static let maximumBodySize = 8 * 1024

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("apps/{app}/devices/{token}/live-activities/push-to-start", use: registerStart)
        group.delete("apps/{app}/devices/{token}/live-activities/push-to-start/{activity_type}", use: deleteStart)
        group.get("apps/{app}/live-activities/{activity_id}", use: show)
        group.put("apps/{app}/live-activities/{activity_id}/devices/{token}", use: registerUpdate)
        group.delete("apps/{app}/live-activities/{activity_id}/devices/{token}", use: deleteUpdate)
    }

    @Sendable func registerStart(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        let key = try context.require(.register, app: app)
        let device = try Self.device(try context.parameters.decoded("token"))
        let body = try await request.decodeJSON(StartTokenBody.self, limit: bodyLimit)
        let activityType = try Self.name(body.activityType, field: "activity_type")
        let token = try Self.token(body.token, field: "token", kind: .pushToStart)
        let result: ActivityTokenRegistration
        do {
            result = try await api.store.registerStartToken(
                app: app, device: device, activityType: activityType, token: token, registeredBy: key.restriction)
        } catch {
            throw Self.answer(error)
        }
        let view = ActivityTokenView(
            deviceToken: device.hex, activityType: activityType, activityID: nil, result: result)
        return try JSONResponse.make(view, status: result.created ? .created : .ok)
    }

    @Sendable func deleteStart(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        let key = try context.require(.register, app: app)
        let device = try Self.device(try context.parameters.decoded("token"))
        let activityType = try Self.name(try context.parameters.decoded("activity_type"), field: "activity_type")
        let deleted: Bool
        do {
            deleted = try await api.store.deleteStartToken(
                app: app, device: device, activityType: activityType, registeredBy: key.restriction)
        } catch {
            throw Self.answer(error)
        }
        guard deleted else { throw APIError.notFound("no push-to-start token for this device and activity type") }
        return Response(status: .noContent)
    }

    @Sendable func registerUpdate(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        let key = try context.require(.register, app: app)
        let activityID = try Self.name(try context.parameters.decoded("activity_id"), field: "activity_id")
        let device = try Self.device(try context.parameters.decoded("token"))
        let body = try await request.decodeJSON(UpdateTokenBody.self, limit: bodyLimit)
        let token = try Self.token(body.token, field: "token", kind: .update)
        // A register-only key follows an activity only with the backend's identity token for it and this device.
        try await api.checkBinding(
            .activity(activityID), device: device, token: body.identityToken, app: app, key: key)
        let result: ActivityTokenRegistration
        do {
            result = try await api.store.registerUpdateToken(
                app: app, activityID: activityID, device: device, token: token, registeredBy: key.restriction,
                maximumPerDevice: api.activityTokensPerDevice(of: key))
        } catch {
            throw Self.answer(error)
        }
        let view = ActivityTokenView(
            deviceToken: device.hex, activityType: nil, activityID: activityID, result: result)
        return try JSONResponse.make(view, status: result.created ? .created : .ok)
    }

    @Sendable func deleteUpdate(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        let key = try context.require(.register, app: app)
        let activityID = try Self.name(try context.parameters.decoded("activity_id"), field: "activity_id")
        let device = try Self.device(try context.parameters.decoded("token"))
        let deleted: Int
        do {
            deleted = try await api.store.deleteUpdateTokens(
                app: app, activityID: activityID, device: device, registeredBy: key.restriction)
        } catch {
            throw Self.answer(error)
        }
        guard deleted > 0 else { throw APIError.notFound("no update token for this activity and device") }
        return Response(status: .noContent)
    }

    @Sendable func show(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.read, app: app)
        let activityID = try Self.name(try context.parameters.decoded("activity_id"), field: "activity_id")
        guard let summary = try await api.store.activitySummary(app: app, activityID: activityID) else {
            throw APIError.notFound("no device has an update token for this activity")
        }
        return try JSONResponse.make(
            ActivityView(
                activityID: activityID, devices: summary.devices,
                lastRegisteredAt: RFC3339Milliseconds.format(summary.lastRegisteredAt / 1000)))
    }

    /// The configured body limit, held to what these small bodies need.
    private var bodyLimit: Int { min(api.configuration.maximumBodySize, Self.maximumBodySize) }

    /// A store error as the API answers it: the registry's refusals as 403 `not_own_device` and 404
    /// `device_not_registered`, anything else as it is (a 500 whose details go only to the log).
    static func answer(_ error: StoreError) -> any Error {
        switch error.code {
        case .notOwnDevice: APIError(.forbidden, code: "not_own_device", error.message)
        case .quotaExceeded: APIError.quotaExceeded(error)
        case .deviceNotRegistered:
            APIError(.notFound, code: "device_not_registered", "the device is not registered for this app")
        default: error
        }
    }

    /// Parses a device's or an activity's token (`DeviceFields`: 32 to 200 bytes), answering a 400
    /// `invalid_token` that names the field and the rule, never the token.
    /// The device a path names: an iOS device token (Live Activities are iOS only). A token that is well formed by
    /// Android's rules only names no device these routes serve: 404 `device_not_registered`, as for a device the app
    /// has not registered, not a 400 for its form (`GET /v1/apps/{app}/devices/{token}` reads either platform's).
    static func device(_ text: String) throws(APIError) -> DeviceToken {
        do {
            return try token(text, field: "the device token")
        } catch {
            guard (try? DeviceFields.token(text, platform: .android)) != nil else { throw error }
            throw APIError(
                .notFound, code: "device_not_registered",
                "the device is not an iOS device of this app: Live Activities are for iOS devices")
        }
    }

    static func token(_ text: String, field: String, kind: DeviceFields.TokenKind = .device) throws(APIError)
        -> DeviceToken
    {
        do {
            return try DeviceFields.token(text, kind: kind)
        } catch {
            throw APIError.badRequest("invalid_token", "\(field): \(error.message)")
        }
    }

    /// Checks an activity type or id: 1 to 200 characters, no control characters (400 `invalid_field` naming
    /// `field`).
    static func name(_ value: String, field: String) throws(APIError) -> String {
        try RegistrationBody.check(value, field: field, maximum: JobLimits.activityIDCharacters)
        return value
    }
}

extension AuthenticatedKey {
    /// The key to limit a registration to, if this key may only register: its own devices. Nil for any other key.
    var restriction: Int64? { registersOnly ? id : nil }
}

/// `{"activity_type": "…", "token": "<hex>"}`.
struct StartTokenBody: Decodable {
    var activityType: String
    var token: String

    enum CodingKeys: String, CodingKey, CaseIterable {
        case activityType = "activity_type"
        case token
    }

    init(from decoder: any Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "the push-to-start token")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        activityType = try container.decode(String.self, forKey: .activityType)
        token = try container.decode(String.self, forKey: .token)
    }
}

/// `{"token": "<hex>", "identity_token": "v1.…"}` (the identity token is needed by a register-only key).
struct UpdateTokenBody: Decodable {
    var token: String
    var identityToken: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case token
        case identityToken = "identity_token"
    }

    init(from decoder: any Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "the update token")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        token = try container.decode(String.self, forKey: .token)
        identityToken = try container.decodeIfPresent(String.self, forKey: .identityToken)
    }
}

/// An activity token's registration as the API shows it: its device and activity, never the token itself.
struct ActivityTokenView: Encodable {
    var deviceToken: String
    var activityType: String?
    var activityID: String?
    var registeredAt: String
    var created: Bool
    var replaced: Bool

    enum CodingKeys: String, CodingKey {
        case deviceToken = "device_token"
        case activityType = "activity_type"
        case activityID = "activity_id"
        case registeredAt = "registered_at"
        case created, replaced
    }

    init(deviceToken: String, activityType: String?, activityID: String?, result: ActivityTokenRegistration) {
        self.deviceToken = deviceToken
        self.activityType = activityType
        self.activityID = activityID
        self.registeredAt = RFC3339Milliseconds.format(result.registeredAt / 1000)
        self.created = result.created
        self.replaced = result.replaced
    }
}

/// `GET /v1/apps/{app}/live-activities/{activity_id}`: the devices following an activity, counted.
struct ActivityView: Encodable {
    var activityID: String
    var devices: Int
    var lastRegisteredAt: String

    enum CodingKeys: String, CodingKey {
        case activityID = "activity_id"
        case devices
        case lastRegisteredAt = "last_registered_at"
    }
}
