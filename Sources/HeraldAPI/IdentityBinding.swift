import APNSCore
import Foundation
import HeraldStore
import Hummingbird

/// The rule of keys an app can carry: a register-only key (embedded in an app, so anyone's) registers and refreshes
/// devices anonymously, but binds a device to a user id or an activity id only with an identity token from the
/// app's backend (`IdentityToken`), unless the app's `identity.required` is false. Keys with another scope (backend
/// keys) bind without one. Refusals are 403s whose message says what to do, never the token or the secret.
extension API {
    /// The app's identity policy: as configured, else required with no secret.
    func identity(of app: String) -> AppIdentity {
        configuration.identities[app] ?? AppIdentity(secret: nil, required: true)
    }

    /// Checks that `key` may bind `device` to `subject`: returns normally if it may, else throws the 403.
    ///
    /// - Parameter alreadyBound: whether the device is bound to this very subject already (a refresh that repeats
    ///   it binds nothing new), asked only when a token is needed and missing.
    func checkBinding(
        _ subject: IdentityToken.Subject,
        device: DeviceToken,
        token: String?,
        app: String,
        key: AuthenticatedKey,
        alreadyBound: () async throws -> Bool = { false }
    ) async throws {
        guard key.registersOnly else { return }
        let policy = identity(of: app)
        let field = Self.field(of: subject)
        guard let token else {
            guard policy.required else { return }
            if try await alreadyBound() { return }
            throw APIError(
                .forbidden, code: "identity_required",
                "binding a device to \(field) with a register-only key needs an identity_token from the app's backend"
                    + " (docs/api.md, Identity tokens); register without \(field), or bind it from the backend with a"
                    + " key that has the send scope")
        }
        guard let secret = policy.secret else {
            throw APIError(
                .forbidden, code: "identity_unavailable",
                "app \(app) has no identity secret (identity.secret_file in the apps file), so no identity_token can"
                    + " be checked; bind \(field) from the backend with a key that has the send scope")
        }
        do {
            try IdentityToken.verify(
                token, secret: secret, app: app, subject: subject, device: device.hex,
                now: configuration.clock.unixSeconds)
        } catch {
            throw APIError(.forbidden, code: "identity_invalid", error.message)
        }
    }

    private static func field(of subject: IdentityToken.Subject) -> String {
        switch subject {
        case .user: "a user_id"
        case .activity: "an activity id"
        }
    }

    /// The quota of new devices an hour of a register-only key: its own, else the configured default.
    func devicesPerHour(of key: AuthenticatedKey) -> Int? {
        key.registersOnly ? key.devicesPerHour ?? configuration.registerDevicesPerHour : nil
    }

    /// The quota of Live Activity update tokens per device of a register-only key: its own, else the default.
    func activityTokensPerDevice(of key: AuthenticatedKey) -> Int? {
        key.registersOnly ? key.activityTokensPerDevice ?? configuration.activityTokensPerDevice : nil
    }
}

extension APIError {
    /// A store's quota refusal as the API answers it: 429 `quota_exceeded` with `Retry-After`.
    static func quotaExceeded(_ error: StoreError) -> APIError {
        APIError(.tooManyRequests, code: "quota_exceeded", error.message, retryAfter: error.retryAfter ?? 3600)
    }
}
