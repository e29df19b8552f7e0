import APNSCore
import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing
import WebPushCore

/// Web devices in the API (issue 37): a Push API subscription registered as `PushSubscription.toJSON()` gives it,
/// shown without its keys and with its endpoint redacted, read and deleted by its percent-encoded endpoint.
@Suite(.needsServices) struct WebDeviceRoutesTests {
    typealias Fixtures = WebSubscriptionFixtures
    static let devices = "/v1/apps/\(APIHarness.appA)/devices"

    /// `text` percent-encoded as one path segment (its `/`, `:` and `?` too).
    static func path(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_.")
        return "\(devices)/" + text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    static func subscription(
        _ endpoint: String, p256dh: String = Fixtures.p256dh, auth: String = Fixtures.auth,
        expirationTime: String = "null"
    ) -> String {
        #"{"endpoint": "\#(endpoint)", "expirationTime": \#(expirationTime), "keys": {"p256dh": "\#(p256dh)", "auth": "\#(auth)"}}"#
    }

    static func body(_ subscription: String, _ extra: String = "") -> String {
        #"{"platform": "web", "subscription": \#(subscription), "user_id": "u1", "topics": ["news"]\#(extra)}"#
    }

    @Test func aSubscriptionIsRegisteredShownRedactedRefreshedAndDeletedByItsEndpoint() async throws {
        try await APIHarness.run { h in
            let endpoint = Fixtures.endpoint(1)
            let created = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: Self.body(Self.subscription(endpoint, expirationTime: "1900000000000"), #", "locale": "fr""#))
            #expect(created.status == .created, "\(created.text)")
            #expect(created.object["platform"] as? String == "web" && created.object["fcm_kind"] is NSNull)
            #expect(created.object["endpoint_origin"] as? String == "https://updates.push.services.mozilla.com")
            #expect(created.object["expiration_time"] as? Int == 1_900_000_000_000)
            #expect(created.object["endpoint_redacted"] as? String == "https://updates.push.services.mozilla.com/…ZA-1")
            #expect(created.object["token"] == nil)
            // Neither the endpoint in full nor a key is ever in an answer.
            #expect(!created.text.contains(endpoint) && !created.text.contains(Fixtures.p256dh))
            #expect(!created.text.contains(Fixtures.auth))
            let stored = try #require(
                try await h.store.device(app: APIHarness.appA, token: DeviceToken(trustedHex: endpoint)))
            #expect(stored.webSubscription == Fixtures.subscription(1, expirationTime: 1_900_000_000_000))
            #expect(stored.userID == "u1" && stored.locale == "fr" && stored.topics == ["news"])

            // The browser subscribes again at the same endpoint with new keys; `token` may be the endpoint itself.
            let refreshed = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: Self.body(
                    Self.subscription(endpoint, p256dh: Fixtures.otherP256dh, auth: Fixtures.otherAuth),
                    #", "token": "\#(endpoint)""#))
            #expect(refreshed.status == .ok, "\(refreshed.text)")
            #expect(refreshed.object["expiration_time"] is NSNull)
            #expect(
                try await h.store.device(app: APIHarness.appA, token: DeviceToken(trustedHex: endpoint))?
                    .webSubscription == Fixtures.subscription(1, other: true))

            let shown = try await h.request(.get, Self.path(endpoint), key: h.keyA)
            #expect(shown.status == .ok, "\(shown.text)")
            #expect(shown.object["platform"] as? String == "web" && shown.object["user_id"] as? String == "u1")
            #expect(!shown.text.contains(endpoint) && !shown.text.contains(Fixtures.otherP256dh))
            #expect(try await h.request(.delete, Self.path(endpoint), key: h.keyA).status == .noContent)
            #expect(try await h.request(.get, Self.path(endpoint), key: h.keyA).status == .notFound)
            // An endpoint's path that is not percent-encoded is not one segment: no such route.
            #expect(try await h.request(.get, "\(Self.devices)/\(endpoint)", key: h.keyA).status == .notFound)
        }
    }

    @Test func aPushSubscriptionChangeReplacesTheOldEndpoint() async throws {
        try await APIHarness.run { h in
            _ = try await h.request(
                .post, Self.devices, key: h.keyA, json: Self.body(Self.subscription(Fixtures.endpoint(1))))
            let moved = try await h.request(
                .post, Self.devices, key: h.keyA,
                json:
                    #"{"platform": "web", "subscription": \#(Self.subscription(Fixtures.endpoint(2))), "old_token": "\#(Fixtures.endpoint(1))"}"#
            )
            #expect(moved.status == .created, "\(moved.text)")
            #expect(moved.object["replaced"] as? Bool == true && moved.object["user_id"] as? String == "u1")
            #expect(moved.object["topics"] as? [String] == ["news"])
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 1)
            // An old token of another platform is refused as before: an iOS token is no endpoint.
            let badOld = try await h.request(
                .post, Self.devices, key: h.keyA,
                json:
                    #"{"platform": "web", "subscription": \#(Self.subscription(Fixtures.endpoint(3))), "old_token": "\#(APIHarness.token(1))"}"#
            )
            #expect(badOld.status == .badRequest && badOld.errorCode == "invalid_token")
            #expect(badOld.text.contains("old_token: the token is not a Web Push endpoint"))
        }
    }

    @Test(
        arguments: [
            // the body's subscription and extra fields, the error code, the words of the answer
            (
                subscription("http://push.example/x"), "", "invalid_token",
                "subscription.endpoint: the endpoint must be an https URL"
            ),
            (subscription("https://push.example/x#secretfrag"), "", "invalid_token", "must not have a fragment"),
            (subscription("https://user@push.example/secret"), "", "invalid_token", "must not carry user information"),
            (
                subscription(Fixtures.endpoint(1), p256dh: "not base64!"), "", "invalid_field",
                "subscription.keys.p256dh is not base64url"
            ),
            (
                subscription(Fixtures.endpoint(1), p256dh: String(Fixtures.p256dh.dropLast(4))), "", "invalid_field",
                "subscription.keys.p256dh is 62 bytes"
            ),
            (
                subscription(Fixtures.endpoint(1), p256dh: "B" + String(repeating: "A", count: 86)), "",
                "invalid_field", "not a point on the P-256 curve"
            ),
            (
                subscription(Fixtures.endpoint(1), auth: "AAAA"), "", "invalid_field",
                "subscription.keys.auth is 3 bytes; it must be 16"
            ),
            (
                subscription(Fixtures.endpoint(1), expirationTime: "-1"), "", "invalid_field",
                "subscription.expirationTime must be milliseconds since 1970"
            ),
            (
                subscription(Fixtures.endpoint(1), expirationTime: "\"soon\""), "", "malformed_json",
                "field subscription.expirationTime has the wrong type"
            ),
            (
                #"{"endpoint": "https://push.example/x", "keys": {"p256dh": "a", "auth": "b", "extra": "c"}}"#, "",
                "unknown_field", "subscription.keys"
            ),
            (
                #"{"endpoint": "https://push.example/x", "keys": {"p256dh": "a", "auth": "b"}, "expiration": 1}"#, "",
                "unknown_field", "the subscription"
            ),
            (#"{"keys": {"p256dh": "a", "auth": "b"}}"#, "", "malformed_json", "missing field subscription.endpoint"),
            (
                subscription(Fixtures.endpoint(1)), #", "token": "https://push.example/other""#, "invalid_token",
                "token: for a web device leave it out"
            ),
            (
                subscription(Fixtures.endpoint(1)), #", "fcm_kind": "token""#, "invalid_field",
                "fcm_kind is for Android devices only"
            ),
        ] as [(String, String, String, String)])
    func aBadSubscriptionIsRefusedNamingTheFieldNeverTheEndpointOrKeys(
        subscription: String, extra: String, code: String, expected: String
    ) async throws {
        try await APIHarness.run { h in
            let response = try await h.request(.post, Self.devices, key: h.keyA, json: Self.body(subscription, extra))
            #expect(response.status == .badRequest, "\(response.text)")
            #expect(response.errorCode == code, "\(response.text)")
            #expect(response.text.contains(expected), "\(response.text)")
            for secret in ["push.example", "secret", Fixtures.p256dh, Fixtures.auth, "dGVzdC1zdWJz"] {
                #expect(!response.text.contains(secret), "\(response.text)")
            }
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test func platformWebNeedsItsSubscriptionAndTheOthersRefuseOne() async throws {
        try await APIHarness.run { h in
            let missing = try await h.request(.post, Self.devices, key: h.keyA, json: #"{"platform": "web"}"#)
            #expect(missing.status == .badRequest && missing.errorCode == "invalid_field")
            #expect(missing.text.contains("subscription is required for platform web"))
            let ios = try await h.request(
                .post, Self.devices, key: h.keyA,
                json:
                    #"{"token": "\#(APIHarness.token(1))", "subscription": \#(Self.subscription(Fixtures.endpoint(1)))}"#
            )
            #expect(ios.status == .badRequest && ios.text.contains("subscription is for web devices only"))
            let noToken = try await h.request(.post, Self.devices, key: h.keyA, json: #"{"user_id": "u"}"#)
            #expect(noToken.status == .badRequest && noToken.text.contains("missing field token"))
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test func theDeadTokenReportGivesAWebSubscriptionsOrigin() async throws {
        try await APIHarness.run { h in
            _ = try await h.request(
                .post, Self.devices, key: h.keyA, json: Self.body(Self.subscription(Fixtures.endpoint(2))))
            _ = try await h.store.startJob(id: "j", app: APIHarness.appA, targetKind: "all")
            var writeBack = WriteBack(jobID: "j", app: APIHarness.appA)
            writeBack.prunes = [
                .init(token: DeviceToken(trustedHex: Fixtures.endpoint(2)), reason: "410", apnsTimestamp: nil)
            ]
            #expect(try await h.store.write(writeBack) == 1)
            let report = "/v1/apps/\(APIHarness.appA)/reports/dead-tokens?since=1d"
            let json = try await h.request(.get, report, key: h.keyA)
            let rows = try #require(json.object["rows"] as? [[String: Any]])
            #expect(rows.first?["platform"] as? String == "web")
            #expect(rows.first?["endpoint_origin"] as? String == "https://web.push.apple.com")
            let csv = try await h.request(.get, report + "&format=csv", key: h.keyA)
            let lines = csv.text.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            #expect(lines.last?.hasPrefix(Fixtures.endpoint(2) + ",410,,j,") == true)
            #expect(lines.last?.hasSuffix(",web,,https://web.push.apple.com") == true)
        }
    }
}
