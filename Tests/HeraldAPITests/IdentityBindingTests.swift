import APNSCore
import Foundation
import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Issue 32's keys an app can carry, against a real PostgreSQL: a register-only key registers anonymously but binds
/// a device to a user or an activity only with the backend's identity token (valid, unexpired, for this app, subject
/// and device), backend keys bind without one; and a register-only key's quotas answer 429 with `Retry-After`.
@Suite(.needsServices) struct IdentityBindingTests {
    static let app = APIHarness.appA
    static let devices = "/v1/apps/\(APIHarness.appA)/devices"

    /// A new key of app A (or `app`) with `scopes` and quotas.
    static func key(
        _ h: APIHarness, _ scopes: Set<APIScope>, app: String = APIHarness.appA, devicesPerHour: Int? = nil,
        activityTokensPerDevice: Int? = nil
    ) async throws -> String {
        let key = APIKey.generate()
        _ = try await h.store.createAPIKey(
            app: app, hash: APIKey.hash(key), prefix: APIKey.prefix(key), label: nil, scopes: scopes,
            devicesPerHour: devicesPerHour, activityTokensPerDevice: activityTokensPerDevice)
        return key
    }

    static func body(_ token: String, user: String? = nil, proof: String? = nil) -> String {
        var fields = [#""token": "\#(token)""#]
        if let user { fields.append(#""user_id": "\#(user)""#) }
        if let proof { fields.append(#""identity_token": "\#(proof)""#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func user(_ h: APIHarness, _ token: String) async throws -> String? {
        try await h.store.device(app: app, token: try DeviceToken(parsing: token))?.userID
    }

    @Test func aRegisterOnlyKeyBindsAUserOnlyWithAValidIdentityToken() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register])
            let (mine, plain) = (APIHarness.token(1), APIHarness.token(2))

            // Issue 32: the attacker's own token registered with someone else's user id.
            let anonymous = try await h.request(
                .post, Self.devices, key: register, json: Self.body(mine, user: "victim-42"))
            #expect(anonymous.status == .forbidden)
            #expect(anonymous.errorCode == "identity_required")
            #expect(anonymous.text.contains("identity_token"))
            #expect(try await h.store.device(app: Self.app, token: try DeviceToken(parsing: mine)) == nil)

            // Registering and refreshing anonymously is still allowed.
            #expect(try await h.request(.post, Self.devices, key: register, json: Self.body(plain)).status == .created)
            // ... but not a refresh that binds the plain device to a user.
            let rebind = try await h.request(
                .post, Self.devices, key: register, json: Self.body(plain, user: "victim-42"))
            #expect(rebind.status == .forbidden && rebind.errorCode == "identity_required")
            #expect(try await Self.user(h, plain) == nil)

            // Wrong tokens: another user's, another device's, another secret's, another app's, expired, too long
            // ahead, malformed. None is echoed.
            let wrong = [
                APIHarness.identityToken(.user("someone-else"), device: mine),
                APIHarness.identityToken(.user("victim-42"), device: plain),
                APIHarness.identityToken(.user("victim-42"), device: mine, secret: Array("not-the-apps-secret!".utf8)),
                APIHarness.identityToken(.user("victim-42"), device: mine, app: APIHarness.appB),
                APIHarness.identityToken(.activity("victim-42"), device: mine),
                APIHarness.identityToken(.user("victim-42"), device: mine, lifetime: -1),
                APIHarness.identityToken(.user("victim-42"), device: mine, lifetime: 8 * 86_400),
                "v1.99999999999.AAAA", "v2.1.x", "", String(repeating: "v", count: 500),
            ]
            for proof in wrong {
                let refused = try await h.request(
                    .post, Self.devices, key: register, json: Self.body(mine, user: "victim-42", proof: proof))
                #expect(refused.status == .forbidden, "\(refused.text)")
                #expect(refused.errorCode == "identity_invalid")
                #expect(proof.isEmpty || !refused.text.contains(proof))
            }
            let expired = try await h.request(
                .post, Self.devices, key: register,
                json: Self.body(
                    mine, user: "victim-42",
                    proof: APIHarness.identityToken(.user("victim-42"), device: mine, lifetime: -1)))
            #expect(expired.text.contains("expired"))
            #expect(try await h.store.device(app: Self.app, token: try DeviceToken(parsing: mine)) == nil)

            // The backend's token for this user and device: bound.
            let proof = APIHarness.identityToken(.user("victim-42"), device: mine)
            let bound = try await h.request(
                .post, Self.devices, key: register, json: Self.body(mine, user: "victim-42", proof: proof))
            #expect(bound.status == .created, "\(bound.text)")
            #expect(try await Self.user(h, mine) == "victim-42")
            // A later refresh repeating the binding needs no token; unbinding (null) needs none either.
            let again = try await h.request(
                .post, Self.devices, key: register, json: Self.body(mine, user: "victim-42"))
            #expect(again.status == .ok)
            let cleared = try await h.request(
                .post, Self.devices, key: register, json: #"{"token": "\#(mine)", "user_id": null}"#)
            #expect(cleared.status == .ok)
            #expect(try await Self.user(h, mine) == nil)
        }
    }

    /// A register-only key that learnt another install's token cannot move that install's user to a token of its own
    /// by replacing it (`old_token`): the new token needs the backend's identity token for that user, like any
    /// binding. With one, the refresh carries the user over.
    @Test func aReplacementThatCarriesAUserOverNeedsAnIdentityTokenForTheNewToken() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register])
            let (victim, attacker, refreshed) = (APIHarness.token(1), APIHarness.token(2), APIHarness.token(3))
            let proof = APIHarness.identityToken(.user("victim-42"), device: victim)
            let bound = try await h.request(
                .post, Self.devices, key: register, json: Self.body(victim, user: "victim-42", proof: proof))
            #expect(bound.status == .created)

            let moved = try await h.request(
                .post, Self.devices, key: register, json: #"{"token": "\#(attacker)", "old_token": "\#(victim)"}"#)
            #expect(moved.status == .forbidden)
            #expect(moved.errorCode == "identity_required")
            #expect(try await Self.user(h, victim) == "victim-42")
            #expect(try await Self.user(h, attacker) == nil)

            // The app's own refresh, with the backend's token for its new token, carries the user over.
            let renewed = APIHarness.identityToken(.user("victim-42"), device: refreshed)
            let refresh = try await h.request(
                .post, Self.devices, key: register,
                json: #"{"token": "\#(refreshed)", "old_token": "\#(victim)", "identity_token": "\#(renewed)"}"#)
            #expect(refresh.status == .created || refresh.status == .ok)
            #expect(try await Self.user(h, refreshed) == "victim-42")
        }
    }

    @Test func backendKeysBindWithoutATokenAndAnAppWithoutASecretRefusesRegisterKeys() async throws {
        try await APIHarness.run { h in
            let send = try await Self.key(h, [.send])
            let sendAndRegister = try await Self.key(h, [.register, .send])
            let token = APIHarness.token(3)
            // A key with the send scope (and register, to reach the route) binds without a token.
            #expect(try await h.request(.post, Self.devices, key: send, json: Self.body(token)).status == .forbidden)
            let bound = try await h.request(
                .post, Self.devices, key: sendAndRegister, json: Self.body(token, user: "u-backend"))
            #expect(bound.status == .created)
            let admin = try await h.request(.post, Self.devices, key: h.keyA, json: Self.body(token, user: "u-admin"))
            #expect(admin.status == .ok)
            #expect(try await Self.user(h, token) == "u-admin")

            // App B has no identity secret: a register-only key's token cannot be checked, so it binds nothing.
            let registerB = try await Self.key(h, [.register], app: APIHarness.appB)
            let proof = APIHarness.identityToken(.user("u"), device: token, app: APIHarness.appB)
            let refused = try await h.request(
                .post, "/v1/apps/\(APIHarness.appB)/devices", key: registerB,
                json: Self.body(token, user: "u", proof: proof))
            #expect(refused.status == .forbidden && refused.errorCode == "identity_unavailable")
            #expect(refused.text.contains("identity.secret_file"))
        }
    }

    @Test func anAppThatDoesNotRequireTokensLetsRegisterKeysBind() async throws {
        try await APIHarness.run {
            $0.identities[APIHarness.appA] = AppIdentity(secret: nil, required: false)
        } _: { h in
            let register = try await Self.key(h, [.register])
            let token = APIHarness.token(4)
            let bound = try await h.request(.post, Self.devices, key: register, json: Self.body(token, user: "u1"))
            #expect(bound.status == .created)
            #expect(try await Self.user(h, token) == "u1")
        }
    }

    @Test func aRegisterOnlyKeyFollowsAnActivityOnlyWithAValidIdentityToken() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register])
            let device = APIHarness.token(5)
            #expect(try await h.request(.post, Self.devices, key: register, json: Self.body(device)).status == .created)
            let uri = "/v1/apps/\(Self.app)/live-activities/order-1234/devices/\(device)"
            let update = APIHarness.token(0x0d, prefix: "0d")

            // Issue 32: an update token PUT for someone else's order.
            let anonymous = try await h.request(.put, uri, key: register, json: #"{"token": "\#(update)"}"#)
            #expect(anonymous.status == .forbidden && anonymous.errorCode == "identity_required")
            let forOther = APIHarness.identityToken(.activity("order-1"), device: device)
            let wrong = try await h.request(
                .put, uri, key: register, json: #"{"token": "\#(update)", "identity_token": "\#(forOther)"}"#)
            #expect(wrong.status == .forbidden && wrong.errorCode == "identity_invalid")
            // A user token is not an activity token, even for the same name.
            let userToken = APIHarness.identityToken(.user("order-1234"), device: device)
            let crossed = try await h.request(
                .put, uri, key: register, json: #"{"token": "\#(update)", "identity_token": "\#(userToken)"}"#)
            #expect(crossed.status == .forbidden && crossed.errorCode == "identity_invalid")
            #expect(try await h.store.activitySummary(app: Self.app, activityID: "order-1234") == nil)

            let proof = APIHarness.identityToken(.activity("order-1234"), device: device)
            let followed = try await h.request(
                .put, uri, key: register, json: #"{"token": "\#(update)", "identity_token": "\#(proof)"}"#)
            #expect(followed.status == .created, "\(followed.text)")
            #expect(try await h.store.activitySummary(app: Self.app, activityID: "order-1234")?.devices == 1)
        }
    }

    @Test func aRegisterOnlyKeyOverItsHourlyDeviceQuotaIsAnswered429WithRetryAfter() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register], devicesPerHour: 3)
            for n in 1...2 {
                let created = try await h.request(
                    .post, Self.devices, key: register, json: Self.body(APIHarness.token(0x100 + n)))
                #expect(created.status == .created)
            }
            // The third as another API process would make it: the count is PostgreSQL's, not this process's.
            let keyID = try #require(try await h.store.apiKey(forHash: APIKey.hash(register))?.id)
            var elsewhere = DeviceRegistration(token: try DeviceToken(parsing: APIHarness.token(0x103)))
            elsewhere.registeredBy = keyID
            elsewhere.devicesPerHour = 3
            #expect(try await h.store.register(elsewhere, app: Self.app).created)
            let over = try await h.request(.post, Self.devices, key: register, json: Self.body(APIHarness.token(0x200)))
            #expect(over.status == .tooManyRequests)
            #expect(over.errorCode == "quota_exceeded")
            let retryAfter = try #require(over.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...3600).contains(retryAfter))
            // Nothing stored for the refused one; refreshing a device already registered is not counted.
            #expect(
                try await h.store.device(app: Self.app, token: try DeviceToken(parsing: APIHarness.token(0x200))) == nil
            )
            let refresh = try await h.request(
                .post, Self.devices, key: register, json: Self.body(APIHarness.token(0x101)))
            #expect(refresh.status == .ok)
            // The quota is the key's: another register key and backend keys are not held by it.
            let other = try await Self.key(h, [.register])
            #expect(
                try await h.request(.post, Self.devices, key: other, json: Self.body(APIHarness.token(0x201))).status
                    == .created)
            #expect(
                try await h.request(.post, Self.devices, key: h.keyA, json: Self.body(APIHarness.token(0x202))).status
                    == .created)
        }
    }

    @Test func aRegisterOnlyKeyOverItsActivityTokensPerDeviceIsAnswered429() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register], activityTokensPerDevice: 2)
            let device = APIHarness.token(6)
            #expect(try await h.request(.post, Self.devices, key: register, json: Self.body(device)).status == .created)
            func put(_ activity: String) async throws -> TestResponse {
                let proof = APIHarness.identityToken(.activity(activity), device: device)
                let update = APIHarness.token(activity.count, prefix: "0d")
                return try await h.request(
                    .put, "/v1/apps/\(Self.app)/live-activities/\(activity)/devices/\(device)", key: register,
                    json: #"{"token": "\#(update)", "identity_token": "\#(proof)"}"#)
            }
            #expect(try await put("a").status == .created)
            #expect(try await put("bb").status == .created)
            let over = try await put("ccc")
            #expect(over.status == .tooManyRequests && over.errorCode == "quota_exceeded")
            #expect(over.headers[.retryAfter] != nil)
            // Rotating the token of an activity the device follows already is not a new one.
            #expect(try await put("a").status == .ok)
        }
    }

    @Test func aRegisterOnlyKeyWithoutARateOfItsOwnTakesTheDefaultRate() async throws {
        try await APIHarness.run {
            $0.registerRequestsPerSecond = 1
        } _: { h in
            let register = try await Self.key(h, [.register])
            #expect(
                try await h.request(.post, Self.devices, key: register, json: Self.body(APIHarness.token(8))).status
                    == .created)
            let second = try await h.request(.post, Self.devices, key: register, json: Self.body(APIHarness.token(9)))
            #expect(second.status == .tooManyRequests && second.errorCode == "rate_limited")
            #expect(second.headers[.retryAfter] == "1")
            // A backend key has no default rate.
            for n in 10..<13 {
                #expect(
                    try await h.request(.post, Self.devices, key: h.keyA, json: Self.body(APIHarness.token(n))).status
                        == .created)
            }
        }
    }
}

/// Identity tokens alone: what a backend mints is what Herald accepts, within the bounds.
@Suite(.needsServices) struct IdentityTokenTests {
    let secret = Array("0123456789abcdef0123456789abcdef".utf8)
    let device = String(repeating: "ab", count: 32)

    @Test func aMintedTokenVerifiesUntilItExpiresAndOnlyForWhatItNames() throws {
        let token = IdentityToken.mint(
            secret: secret, app: "com.example", subject: .user("u1"), device: device, expiry: 1_000_600)
        #expect(token.hasPrefix("v1.1000600."))
        try IdentityToken.verify(
            token, secret: secret, app: "com.example", subject: .user("u1"), device: device, now: 1_000_000)
        #expect(throws: IdentityToken.Refusal.self) {
            try IdentityToken.verify(
                token, secret: secret, app: "com.example", subject: .user("u1"), device: device, now: 1_000_600)
        }
        #expect(throws: IdentityToken.Refusal.self) {
            try IdentityToken.verify(
                token, secret: secret, app: "com.example", subject: .user("u2"), device: device, now: 1_000_000)
        }
        #expect(throws: IdentityToken.Refusal.self) {
            try IdentityToken.verify(
                token, secret: secret, app: "com.other", subject: .user("u1"), device: device, now: 1_000_000)
        }
        // Valid for more than a week ahead: refused.
        let far = IdentityToken.mint(
            secret: secret, app: "com.example", subject: .user("u1"), device: device, expiry: 1_000_000 + 8 * 86_400)
        #expect(throws: IdentityToken.Refusal.self) {
            try IdentityToken.verify(
                far, secret: secret, app: "com.example", subject: .user("u1"), device: device, now: 1_000_000)
        }
    }

    /// The documented message and encoding: the token Python's hmac module makes for the same inputs (the snippet in
    /// docs/api.md), computed once and written here.
    @Test func theSignatureIsTheDocumentedHMAC() {
        let token = IdentityToken.mint(
            secret: secret, app: "com.example", subject: .activity("order-1"), device: device, expiry: 1_700_000_000)
        #expect(token == "v1.1700000000.V5dwvZP2nB-G0DT-e8vkvvNQWCn8u7fDV8-wrK-58wM")
    }
}
