import APNSCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAPI

/// Scoped keys: each route allowed to the scopes that should reach it and refused (403 `scope_missing`) to the rest;
/// a register-only key limited to its own devices; a key's rate limit answered with 429 and `Retry-After`.
@Suite(.needsServices) struct KeyScopeTests {
    /// A new key of app A with `scopes`.
    static func key(_ h: APIHarness, _ scopes: Set<APIScope>, requestsPerSecond: Int? = nil) async throws -> String {
        let key = APIKey.generate()
        _ = try await h.store.createAPIKey(
            app: APIHarness.appA, hash: APIKey.hash(key), prefix: APIKey.prefix(key), label: nil, scopes: scopes,
            requestsPerSecond: requestsPerSecond)
        return key
    }

    /// Every /v1 route with the scope it needs.
    static func routes() -> [(HTTPRequest.Method, String, String?, APIScope)] {
        let app = APIHarness.appA
        let token = APIHarness.token(1)
        return [
            (.post, "/v1/apps/\(app)/devices", #"{"token": "\#(token)"}"#, .register),
            (.get, "/v1/apps/\(app)/devices/\(token)", nil, .read),
            (
                .post, "/v1/apps/\(app)/notifications",
                #"{"id": "scoped", "target": {"tokens": ["\#(token)"]}, "notification": {"aps": {"alert": "x"}}}"#,
                .send
            ),
            (.get, "/v1/apps/\(app)/reports/dead-tokens", nil, .read),
            (.get, "/v1/jobs/nothing", nil, .read),
            (.delete, "/v1/jobs/nothing", nil, .send),
            (.post, "/v1/apps/\(app)/jobs/nothing/restore", nil, .admin),
            (.delete, "/v1/apps/\(app)/devices/\(token)", nil, .admin),
        ]
    }

    @Test func eachRouteIsAllowedToItsScopeAndToAdminAndRefusedToTheOthers() async throws {
        try await APIHarness.run { h in
            var keys: [APIScope: String] = [:]
            for scope in APIScope.allCases { keys[scope] = try await Self.key(h, [scope]) }
            for (method, uri, body, needed) in Self.routes() {
                for scope in APIScope.allCases {
                    let response = try await h.request(method, uri, key: keys[scope], json: body)
                    if scope == needed || scope == .admin {
                        #expect(response.status != .forbidden, "\(scope) on \(method) \(uri): \(response.text)")
                        #expect(response.status != .unauthorized)
                    } else {
                        #expect(response.status == .forbidden, "\(scope) on \(method) \(uri)")
                        #expect(response.errorCode == "scope_missing")
                        #expect(response.text.contains("--scope \(needed.rawValue)"))
                    }
                }
            }
            // A key of several scopes has each of them.
            let both = try await Self.key(h, [.send, .read])
            #expect(try await h.request(.get, "/v1/jobs/nothing", key: both).status == .notFound)
            let posted = try await h.request(.post, "/v1/apps/\(APIHarness.appA)/devices", key: both, json: "{}")
            #expect(posted.errorCode == "scope_missing")
        }
    }

    @Test func aRegisterOnlyKeyChangesOnlyTheDevicesItRegistered() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register])
            let devices = "/v1/apps/\(APIHarness.appA)/devices"
            let (own, newer, backend) = (APIHarness.token(1), APIHarness.token(2), APIHarness.token(3))

            // Its own device: added, refreshed, and its token replaced.
            #expect(
                try await h.request(.post, devices, key: register, json: #"{"token": "\#(own)"}"#).status == .created)
            // Bound to a user with the backend's identity token.
            let proof = APIHarness.identityToken(.user("u1"), device: own)
            let refreshed = try await h.request(
                .post, devices, key: register,
                json: #"{"token": "\#(own)", "user_id": "u1", "identity_token": "\#(proof)"}"#)
            #expect(refreshed.status == .ok)
            // Its token replaced: the user comes along with the backend's identity token for the new token.
            let renewed = APIHarness.identityToken(.user("u1"), device: newer)
            let replaced = try await h.request(
                .post, devices, key: register,
                json: #"{"token": "\#(newer)", "old_token": "\#(own)", "identity_token": "\#(renewed)"}"#)
            #expect(replaced.status == .created && replaced.object["replaced"] as? Bool == true)
            #expect(replaced.object["user_id"] as? String == "u1")

            // A device the backend registered (with an admin key): neither refreshed nor taken over.
            let made = try await h.request(
                .post, devices, key: h.keyA, json: #"{"token": "\#(backend)", "user_id": "victim"}"#)
            #expect(made.status == .created)
            let refresh = try await h.request(
                .post, devices, key: register, json: #"{"token": "\#(backend)", "locale": "fr"}"#)
            #expect(refresh.status == .forbidden && refresh.errorCode == "not_own_device")
            let takeOver = try await h.request(
                .post, devices, key: register,
                json: #"{"token": "\#(APIHarness.token(4))", "old_token": "\#(backend)"}"#)
            #expect(takeOver.status == .forbidden && takeOver.errorCode == "not_own_device")
            #expect(!takeOver.text.contains(backend))
            let kept = try await h.store.device(app: APIHarness.appA, token: try DeviceToken(parsing: backend))
            #expect(kept?.userID == "victim")
            #expect(
                try await h.store.device(app: APIHarness.appA, token: try DeviceToken(parsing: APIHarness.token(4)))
                    == nil)

            // The backend may still change the register key's devices (and they stay the register key's).
            let adopted = try await h.request(
                .post, devices, key: h.keyA, json: #"{"token": "\#(newer)", "user_id": "u2"}"#)
            #expect(adopted.status == .ok)
            #expect(try await h.request(.post, devices, key: register, json: #"{"token": "\#(newer)"}"#).status == .ok)
        }
    }

    @Test func aKeyOverItsRateIsAnswered429WithRetryAfter() async throws {
        try await APIHarness.run { h in
            // One request a second: the second of two back-to-back requests is over it.
            let limited = try await Self.key(h, [.read], requestsPerSecond: 1)
            let uri = "/v1/jobs/nothing"
            #expect(try await h.request(.get, uri, key: limited).status == .notFound)
            let second = try await h.request(.get, uri, key: limited)
            #expect(second.status == .tooManyRequests)
            #expect(second.errorCode == "rate_limited")
            #expect(second.headers[.retryAfter] == "1")
            // Another key is not held by it.
            #expect(try await h.request(.get, uri, key: h.keyA).status == .notFound)
        }
    }
}

/// The rate limiter alone, on a clock the test moves.
@Suite(.needsServices) struct KeyRateLimiterTests {
    @Test func aKeyBurstsUpToItsRateThenWaitsForTheBucketToRefill() {
        let limiter = KeyRateLimiter()
        let start = ContinuousClock.now
        for _ in 0..<5 { #expect(limiter.take(key: 1, perSecond: 5, now: start) == nil) }
        #expect(limiter.take(key: 1, perSecond: 5, now: start) == 1)
        // Another key has a bucket of its own.
        #expect(limiter.take(key: 2, perSecond: 5, now: start) == nil)
        // A fifth of a second refills one request; a second refills the bucket, never beyond it.
        #expect(limiter.take(key: 1, perSecond: 5, now: start + .milliseconds(200)) == nil)
        #expect(limiter.take(key: 1, perSecond: 5, now: start + .milliseconds(200)) == 1)
        let later = start + .seconds(10)
        for _ in 0..<5 { #expect(limiter.take(key: 1, perSecond: 5, now: later) == nil) }
        #expect(limiter.take(key: 1, perSecond: 5, now: later) == 1)
        // A slow rate says how long to wait in whole seconds.
        #expect(limiter.take(key: 3, perSecond: 1, now: start) == nil)
        #expect(limiter.take(key: 3, perSecond: 1, now: start + .milliseconds(100)) == 1)
    }
}
