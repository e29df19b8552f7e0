import HeraldCore
import HeraldStore
import WebPushCore

/// A registration's `subscription`: what the browser's `PushSubscription.toJSON()` gives, unknown fields refused.
struct SubscriptionBody: Decodable {
    var endpoint: String
    /// Milliseconds since 1970; null (or absent) when the browser gives none.
    var expirationTime: Int64?
    var keys: Keys

    struct Keys: Decodable {
        var p256dh: String
        var auth: String

        enum CodingKeys: String, CodingKey, CaseIterable { case p256dh, auth }

        init(from decoder: any Decoder) throws {
            try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "subscription.keys")
            let container = try decoder.container(keyedBy: CodingKeys.self)
            p256dh = try container.decode(String.self, forKey: .p256dh)
            auth = try container.decode(String.self, forKey: .auth)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case endpoint, expirationTime, keys }

    init(from decoder: any Decoder) throws {
        try decoder.refuseUnknownFields(CodingKeys.allCases.map(\.rawValue), in: "the subscription")
        let container = try decoder.container(keyedBy: CodingKeys.self)
        endpoint = try container.decode(String.self, forKey: .endpoint)
        expirationTime = try container.decodeIfPresent(Int64.self, forKey: .expirationTime)
        keys = try container.decode(Keys.self, forKey: .keys)
    }
}

extension RegistrationBody {
    /// A web device's registration: its `subscription` by the rules the imports apply too
    /// (`DeviceFields.webSubscription`), `token` left out (or the endpoint itself), `old_token` the endpoint it
    /// replaces. Every sentence names the field and the rule, never the endpoint or a key.
    func validatedWeb() throws(APIError) -> DeviceRegistration {
        guard fcmKind == nil else {
            throw APIError.badRequest("invalid_field", "fcm_kind is for Android devices only (platform android)")
        }
        guard let body = subscription else {
            throw APIError.badRequest(
                "invalid_field", "subscription is required for platform web: PushSubscription.toJSON()")
        }
        let web: WebPushSubscription
        do {
            web = try DeviceFields.webSubscription(
                endpoint: body.endpoint, p256dh: body.keys.p256dh, auth: body.keys.auth,
                expirationTime: body.expirationTime, names: .api)
        } catch {
            let code = error.message.hasPrefix("subscription.endpoint") ? "invalid_token" : "invalid_field"
            throw APIError.badRequest(code, error.message)
        }
        if let token, token != body.endpoint {
            throw APIError.badRequest(
                "invalid_token", "token: for a web device leave it out, or give subscription.endpoint itself")
        }
        let old = try oldToken.map { (text) throws(APIError) in
            try DeviceRoutes.token(text, field: "old_token", platform: .web)
        }
        try checkFields()
        var registration = DeviceRegistration(
            webSubscription: web, oldToken: old, userID: userID, locale: locale, topics: topics)
        registration.environment = environment
        return registration
    }
}
