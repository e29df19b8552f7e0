import Foundation
import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Device registration, lookup and removal against a real PostgreSQL.
@Suite(.needsServices) struct DeviceRoutesTests {
    static let devices = "/v1/apps/\(APIHarness.appA)/devices"

    @Test func registrationUpsertsRefreshesAndResetsTheBadge() async throws {
        try await APIHarness.run { h in
            let token = APIHarness.token(1)
            let first = try await h.request(
                .post, Self.devices, key: h.keyA,
                json:
                    #"{"token": "\#(token.uppercased())", "user_id": "u1", "locale": "en-GB", "topics": ["sports"], "environment": "sandbox"}"#
            )
            #expect(first.status == .created)
            #expect(first.object["token"] as? String == token)
            #expect(first.object["created"] as? Bool == true)
            let before = try #require(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: token)))
            #expect(before.userID == "u1" && before.locale == "en-GB" && before.topics == ["sports"])
            #expect(before.environment == "sandbox")

            try await h.store.client.query(
                "UPDATE devices SET badge = 7, registered_at = now() - interval '1 day' WHERE token = \(token)",
                logger: Logger(label: "t")
            )
            // A refresh without fields keeps them, moves the registration time on and resets the badge.
            let again = try await h.request(.post, Self.devices, key: h.keyA, json: #"{"token": "\#(token)"}"#)
            #expect(again.status == .ok)
            #expect(again.object["created"] as? Bool == false)
            let after = try #require(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: token)))
            #expect(after.userID == "u1" && after.topics == ["sports"])
            #expect(after.badge == 0)
            #expect(after.registeredAt > before.registeredAt - 3_600_000_000)
            #expect(after.registeredAt > Int64(Date().timeIntervalSince1970 * 1_000_000) - 600_000_000)

            // null clears a field.
            _ = try await h.request(.post, Self.devices, key: h.keyA, json: #"{"token": "\#(token)", "user_id": null}"#)
            #expect(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: token))?.userID == nil)

            let shown = try await h.request(.get, "\(Self.devices)/\(token)", key: h.keyA)
            #expect(shown.status == .ok)
            #expect(shown.object["topics"] as? [String] == ["sports"])
            #expect(shown.object["registered_at"] is String)

            #expect(try await h.request(.delete, "\(Self.devices)/\(token)", key: h.keyA).status == .noContent)
            let gone = try await h.request(.get, "\(Self.devices)/\(token)", key: h.keyA)
            #expect(gone.status == .notFound)
            #expect(gone.errorCode == "not_found")
            #expect(!gone.text.contains(token))
            #expect(try await h.request(.delete, "\(Self.devices)/\(token)", key: h.keyA).status == .notFound)
        }
    }

    @Test func oldTokenReplacesTheDeviceAndKeepsItsFields() async throws {
        try await APIHarness.run { h in
            let old = APIHarness.token(10)
            let new = APIHarness.token(11)
            _ = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(old)", "user_id": "u9", "locale": "fr", "topics": ["a", "b"]}"#
            )
            let replaced = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(new)", "old_token": "\#(old)", "locale": "fr-CA"}"#
            )
            #expect(replaced.status == .created)
            #expect(replaced.object["replaced"] as? Bool == true)
            #expect(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: old)) == nil)
            let device = try #require(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: new)))
            #expect(device.userID == "u9")
            #expect(device.topics == ["a", "b"])
            #expect(device.locale == "fr-CA")
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 1)

            // An unknown old token is not an error: the new device is simply registered.
            let fresh = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(APIHarness.token(12))", "old_token": "\#(old)"}"#
            )
            #expect(fresh.status == .created)
            #expect(fresh.object["replaced"] as? Bool == false)
        }
    }

    @Test func badTokensAndFieldsAreRejectedWithoutEchoAndStoreNothing() async throws {
        try await APIHarness.run { h in
            let secretish = "zz" + APIHarness.token(5)
            let cases: [(String, String)] = [
                (#"{"token": "\#(secretish)"}"#, "invalid_token"),
                (#"{"token": "abc"}"#, "invalid_token"),
                (#"{"token": "\#(APIHarness.token(1))", "old_token": "\#(secretish)"}"#, "invalid_token"),
                (#"{"token": "\#(APIHarness.token(1))", "environment": "staging"}"#, "invalid_field"),
                (#"{"token": "\#(APIHarness.token(1))", "locale": "en GB"}"#, "invalid_field"),
                (#"{"token": "\#(APIHarness.token(1))", "user_id": "a\u0000b"}"#, "invalid_field"),
                (#"{"token": "\#(APIHarness.token(1))", "user_id": 42}"#, "malformed_json"),
                (#"{"user_id": "u"}"#, "malformed_json"),
                (#"{"token": "#, "malformed_json"),
                ("", "malformed_json"),
            ]
            for (body, code) in cases {
                let response = try await h.request(.post, Self.devices, key: h.keyA, json: body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == code, "\(body)")
                #expect(!response.text.contains(secretish))
            }
            // (`secretish` alone is an Android registration token by its characters: a path token is read by either
            // platform's rules. The `!` is in neither.)
            let badPath = try await h.request(.get, "\(Self.devices)/\(secretish)!", key: h.keyA)
            #expect(badPath.status == .badRequest)
            #expect(!badPath.text.contains(secretish))
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test func oversizeBodiesAre413AndStoreNothing() async throws {
        try await APIHarness.run(maximumBodySize: 1024) { h in
            let padding = String(repeating: "x", count: 2000)
            let response = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(APIHarness.token(1))", "user_id": "\#(padding)"}"#
            )
            #expect(response.status == .contentTooLarge)
            #expect(response.errorCode == "body_too_large")
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test func sqlLookingStringsAreStoredVerbatimAndHarmless() async throws {
        try await APIHarness.run { h in
            let token = APIHarness.token(3)
            let user = #"robert'); DROP TABLE devices; --"#
            let topic = #"x' OR '1'='1"#
            let response = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(token)", "user_id": "\#(user)", "topics": ["\#(topic)", "$1", "\\N"]}"#
            )
            #expect(response.status == .created)
            let device = try #require(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: token)))
            #expect(device.userID == user)
            #expect(device.topics == [topic, "$1", "\\N"])
            // The devices table is still there and holds exactly this device; the app path is a bound value too.
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 1)
            let evil = "x'%3B%20DROP%20TABLE%20jobs%3B--"
            let other = try await h.request(.get, "/v1/apps/\(evil)/devices/\(token)", key: h.keyA)
            #expect(other.status == .forbidden)
            #expect(try await h.store.jobs(id: "anything").isEmpty)
        }
    }
}
