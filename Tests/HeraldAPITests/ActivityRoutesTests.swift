import APNSCore
import Foundation
import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// The Live Activity token routes against a real PostgreSQL: registration, rotation and removal of push-to-start and
/// update tokens, the activity's device count, scopes and register-only keys, and bad input.
@Suite(.needsServices) struct ActivityRoutesTests {
    static let app = APIHarness.appA
    static let device = APIHarness.token(1)
    static let startToken = APIHarness.token(0x51, prefix: "5a")
    static let updateToken = APIHarness.token(0x0d, prefix: "0d")

    static func startURI(_ device: String = device) -> String {
        "/v1/apps/\(app)/devices/\(device)/live-activities/push-to-start"
    }
    static func updateURI(_ activity: String = "order-1", device: String = device) -> String {
        "/v1/apps/\(app)/live-activities/\(activity)/devices/\(device)"
    }

    /// A new key of app A with `scopes`.
    static func key(_ h: APIHarness, _ scopes: Set<APIScope>) async throws -> String {
        let key = APIKey.generate()
        _ = try await h.store.createAPIKey(
            app: app, hash: APIKey.hash(key), prefix: APIKey.prefix(key), label: nil, scopes: scopes)
        return key
    }

    /// An update token's body with the backend's identity token for `activity` on `device` (what a register-only
    /// key needs; other keys ignore it).
    static func updateBody(_ activity: String = "order-1", device: String = device) -> String {
        let proof = APIHarness.identityToken(.activity(activity), device: device)
        return #"{"token": "\#(updateToken)", "identity_token": "\#(proof)"}"#
    }

    static func registerDevice(_ h: APIHarness, _ token: String = device, key: String? = nil) async throws {
        let response = try await h.request(
            .post, "/v1/apps/\(app)/devices", key: key ?? h.keyA, json: #"{"token": "\#(token)"}"#)
        #expect(response.status == .created)
    }

    @Test func pushToStartTokensAreCreatedRefreshedRotatedAndDeleted() async throws {
        try await APIHarness.run { h in
            try await Self.registerDevice(h)
            let body = #"{"activity_type": "DeliveryAttributes", "token": "\#(Self.startToken.uppercased())"}"#
            let created = try await h.request(.post, Self.startURI(), key: h.keyA, json: body)
            #expect(created.status == .created)
            #expect(created.object["device_token"] as? String == Self.device)
            #expect(created.object["activity_type"] as? String == "DeliveryAttributes")
            #expect(created.object["created"] as? Bool == true && created.object["replaced"] as? Bool == false)
            #expect(created.object["registered_at"] is String)
            #expect(!created.text.contains(Self.startToken))

            let refreshed = try await h.request(.post, Self.startURI(), key: h.keyA, json: body)
            #expect(refreshed.status == .ok && refreshed.object["created"] as? Bool == false)
            let newer = APIHarness.token(0x52, prefix: "5a")
            let rotated = try await h.request(
                .post, Self.startURI(), key: h.keyA,
                json: #"{"activity_type": "DeliveryAttributes", "token": "\#(newer)"}"#)
            #expect(rotated.status == .ok && rotated.object["replaced"] as? Bool == true)
            let stored = try await h.store.startTokens(
                app: Self.app, activityType: "DeliveryAttributes", devices: .all, limit: 10)
            #expect(stored.tokens.map(\.hex) == [newer])

            let uri = Self.startURI() + "/DeliveryAttributes"
            #expect(try await h.request(.delete, uri, key: h.keyA).status == .noContent)
            let again = try await h.request(.delete, uri, key: h.keyA)
            #expect(again.status == .notFound && again.errorCode == "not_found")
        }
    }

    @Test func updateTokensRotateAndTheActivityShowsItsDeviceCount() async throws {
        try await APIHarness.run { h in
            try await Self.registerDevice(h)
            try await Self.registerDevice(h, APIHarness.token(2))
            let first = try await h.request(
                .put, Self.updateURI(), key: h.keyA, json: #"{"token": "\#(Self.updateToken)"}"#)
            #expect(first.status == .created)
            #expect(first.object["activity_id"] as? String == "order-1")
            #expect(first.object["replaced"] as? Bool == false)
            #expect(!first.text.contains(Self.updateToken))
            let same = try await h.request(
                .put, Self.updateURI(), key: h.keyA, json: #"{"token": "\#(Self.updateToken)"}"#)
            #expect(same.status == .ok && same.object["replaced"] as? Bool == false)
            let newer = APIHarness.token(0x0e, prefix: "0d")
            let rotated = try await h.request(.put, Self.updateURI(), key: h.keyA, json: #"{"token": "\#(newer)"}"#)
            #expect(rotated.status == .ok && rotated.object["replaced"] as? Bool == true)
            #expect(
                try await h.store.updateTokens(app: Self.app, activityID: "order-1", limit: 10).tokens.map(\.hex)
                    == [newer])
            _ = try await h.request(
                .put, Self.updateURI(device: APIHarness.token(2)), key: h.keyA,
                json: #"{"token": "\#(APIHarness.token(0x0f, prefix: "0d"))"}"#)

            // An id with a space and a slash, percent-encoded in the path, is one activity.
            let odd = "ride 7/b"
            let oddPath = "ride%207%2Fb"
            #expect(
                try await h.request(
                    .put, Self.updateURI(oddPath), key: h.keyA, json: #"{"token": "\#(Self.updateToken)"}"#
                ).status == .created)
            #expect(try await h.store.activitySummary(app: Self.app, activityID: odd)?.devices == 1)

            let shown = try await h.request(.get, "/v1/apps/\(Self.app)/live-activities/order-1", key: h.keyA)
            #expect(shown.status == .ok)
            #expect(shown.object["devices"] as? Int == 2)
            #expect(shown.object["activity_id"] as? String == "order-1")
            #expect(shown.object["last_registered_at"] is String)
            #expect(!shown.text.contains(newer) && !shown.text.contains(Self.device))

            #expect(try await h.request(.delete, Self.updateURI(), key: h.keyA).status == .noContent)
            #expect(try await h.request(.delete, Self.updateURI(), key: h.keyA).status == .notFound)
            #expect(
                try await h.request(.delete, Self.updateURI(device: APIHarness.token(2)), key: h.keyA).status
                    == .noContent)
            let gone = try await h.request(.get, "/v1/apps/\(Self.app)/live-activities/order-1", key: h.keyA)
            #expect(gone.status == .notFound)
        }
    }

    @Test func anUnregisteredDeviceIs404AndStoresNothing() async throws {
        try await APIHarness.run { h in
            let start = try await h.request(
                .post, Self.startURI(), key: h.keyA,
                json: #"{"activity_type": "T", "token": "\#(Self.startToken)"}"#)
            #expect(start.status == .notFound && start.errorCode == "device_not_registered")
            let update = try await h.request(
                .put, Self.updateURI(), key: h.keyA, json: #"{"token": "\#(Self.updateToken)"}"#)
            #expect(update.status == .notFound && update.errorCode == "device_not_registered")
            #expect(!start.text.contains(Self.device) && !update.text.contains(Self.updateToken))
            // Registered for app B only: still unknown to app A.
            _ = try await h.request(
                .post, "/v1/apps/\(APIHarness.appB)/devices", key: h.keyB, json: #"{"token": "\#(Self.device)"}"#)
            let other = try await h.request(
                .put, Self.updateURI(), key: h.keyA, json: #"{"token": "\#(Self.updateToken)"}"#)
            #expect(other.errorCode == "device_not_registered")
            #expect(try await h.store.activitySummary(app: Self.app, activityID: "order-1") == nil)
        }
    }

    @Test func eachRouteIsAllowedToItsScopeAndRefusedToTheOthers() async throws {
        try await APIHarness.run { h in
            try await Self.registerDevice(h)
            var keys: [APIScope: String] = [:]
            for scope in APIScope.allCases { keys[scope] = try await Self.key(h, [scope]) }
            // The register key's own device, so that its writes are not refused as not_own_device.
            let own = APIHarness.token(7)
            try await Self.registerDevice(h, own, key: keys[.register])
            let routes: [(HTTPRequest.Method, String, String?, APIScope)] = [
                (.post, Self.startURI(own), #"{"activity_type": "T", "token": "\#(Self.startToken)"}"#, .register),
                (.delete, Self.startURI(own) + "/T", nil, .register),
                (.put, Self.updateURI(device: own), Self.updateBody(device: own), .register),
                (.delete, Self.updateURI(device: own), nil, .register),
                (.get, "/v1/apps/\(Self.app)/live-activities/order-1", nil, .read),
            ]
            for (method, uri, body, needed) in routes {
                for scope in APIScope.allCases {
                    let response = try await h.request(method, uri, key: keys[scope], json: body)
                    if scope == needed || scope == .admin {
                        #expect(response.status != .forbidden, "\(scope) on \(method) \(uri): \(response.text)")
                        #expect(response.status != .unauthorized)
                    } else {
                        #expect(response.status == .forbidden, "\(scope) on \(method) \(uri)")
                        #expect(response.errorCode == "scope_missing")
                    }
                }
                #expect(try await h.request(method, uri, key: nil, json: body).status == .unauthorized)
                // App B's key on app A's routes.
                let foreign = try await h.request(method, uri, key: h.keyB, json: body)
                #expect(foreign.status == .forbidden && foreign.errorCode == "forbidden")
            }
        }
    }

    @Test func aRegisterOnlyKeyChangesOnlyTheTokensOfDevicesItRegistered() async throws {
        try await APIHarness.run { h in
            let register = try await Self.key(h, [.register])
            let own = APIHarness.token(7)
            try await Self.registerDevice(h, own, key: register)
            try await Self.registerDevice(h)  // the backend's (admin key)
            let start = #"{"activity_type": "T", "token": "\#(Self.startToken)"}"#
            let update = Self.updateBody()

            #expect(try await h.request(.post, Self.startURI(own), key: register, json: start).status == .created)
            let ownUpdate = Self.updateBody(device: own)
            #expect(
                try await h.request(.put, Self.updateURI(device: own), key: register, json: ownUpdate).status
                    == .created)
            // The backend's device: refused, nothing written.
            let refusedStart = try await h.request(.post, Self.startURI(), key: register, json: start)
            #expect(refusedStart.status == .forbidden && refusedStart.errorCode == "not_own_device")
            #expect(!refusedStart.text.contains(Self.device) && !refusedStart.text.contains(Self.startToken))
            let refusedUpdate = try await h.request(.put, Self.updateURI(), key: register, json: update)
            #expect(refusedUpdate.status == .forbidden && refusedUpdate.errorCode == "not_own_device")
            let starts = try await h.store.startTokens(app: Self.app, activityType: "T", devices: .all, limit: 10)
            #expect(starts.entries.map(\.device.hex) == [own])
            #expect(try await h.store.activitySummary(app: Self.app, activityID: "order-1")?.devices == 1)

            // The backend's tokens on its device cannot be removed by the register key either.
            _ = try await h.request(.post, Self.startURI(), key: h.keyA, json: start)
            _ = try await h.request(.put, Self.updateURI(), key: h.keyA, json: update)
            let deleteStart = try await h.request(.delete, Self.startURI() + "/T", key: register)
            #expect(deleteStart.status == .forbidden && deleteStart.errorCode == "not_own_device")
            let deleteUpdate = try await h.request(.delete, Self.updateURI(), key: register)
            #expect(deleteUpdate.status == .forbidden && deleteUpdate.errorCode == "not_own_device")
            #expect(try await h.store.activitySummary(app: Self.app, activityID: "order-1")?.devices == 2)
            // Its own, it can.
            #expect(try await h.request(.delete, Self.startURI(own) + "/T", key: register).status == .noContent)
            #expect(try await h.request(.delete, Self.updateURI(device: own), key: register).status == .noContent)
        }
    }

    @Test func badTokensAndNamesAre400sThatNameTheFieldWithoutEchoAndStoreNothing() async throws {
        try await APIHarness.run { h in
            try await Self.registerDevice(h)
            let secretish = "zz" + APIHarness.token(9, prefix: "5e")
            let long = String(repeating: "x", count: 201)
            let startCases: [(String, String, String)] = [
                (#"{"activity_type": "T", "token": "\#(secretish)"}"#, "invalid_token", "token"),
                (#"{"activity_type": "T", "token": "abc"}"#, "invalid_token", "token"),
                (#"{"activity_type": "", "token": "\#(Self.startToken)"}"#, "invalid_field", "activity_type"),
                (#"{"activity_type": "\#(long)", "token": "\#(Self.startToken)"}"#, "invalid_field", "activity_type"),
                (#"{"activity_type": "a\u0007b", "token": "\#(Self.startToken)"}"#, "invalid_field", "activity_type"),
                (#"{"activity_type": "a\u0085b", "token": "\#(Self.startToken)"}"#, "invalid_field", "activity_type"),
                (#"{"activity_type": 4, "token": "\#(Self.startToken)"}"#, "malformed_json", "activity_type"),
                (#"{"token": "\#(Self.startToken)"}"#, "malformed_json", "activity_type"),
                (#"{"activity_type": "T"}"#, "malformed_json", "token"),
                (#"{"activity_type": "T", "#, "malformed_json", "JSON"),
            ]
            for (body, code, field) in startCases {
                let response = try await h.request(.post, Self.startURI(), key: h.keyA, json: body)
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == code, "\(body)")
                #expect(response.text.contains(field), "\(body): \(response.text)")
                #expect(!response.text.contains(secretish) && !response.text.contains(Self.startToken))
            }
            let updateCases: [(String, String, String?, String)] = [
                // (`secretish` alone is an Android token by its characters: 404 below. The `!` is no platform's.)
                (
                    Self.updateURI(device: secretish + "!"), "invalid_token", #"{"token": "\#(Self.updateToken)"}"#,
                    "device"
                ),
                (Self.updateURI(), "invalid_token", #"{"token": "\#(secretish)"}"#, "token"),
                (Self.updateURI(long), "invalid_field", #"{"token": "\#(Self.updateToken)"}"#, "activity_id"),
                (Self.updateURI("a%0Ab"), "invalid_field", #"{"token": "\#(Self.updateToken)"}"#, "activity_id"),
                (Self.updateURI(), "malformed_json", "[]", "body"),
            ]
            for (uri, code, body, field) in updateCases {
                let response = try await h.request(.put, uri, key: h.keyA, json: body)
                #expect(response.status == .badRequest, "\(uri)")
                #expect(response.errorCode == code, "\(uri)")
                #expect(response.text.contains(field), "\(uri): \(response.text)")
                #expect(!response.text.contains(secretish))
            }
            let badPath = try await h.request(.delete, Self.startURI(secretish + "!") + "/T", key: h.keyA)
            #expect(badPath.status == .badRequest && !badPath.text.contains(secretish))
            // A token well formed by Android's rules only names no iOS device: Live Activities are iOS only.
            for (method, uri) in [
                (HTTPRequest.Method.delete, Self.startURI(secretish) + "/T"),
                (.delete, Self.updateURI(device: secretish)),
            ] {
                let android = try await h.request(method, uri, key: h.keyA)
                #expect(android.status == .notFound && android.errorCode == "device_not_registered", "\(uri)")
                #expect(!android.text.contains(secretish))
            }
            let badType = try await h.request(.delete, Self.startURI() + "/a%7Fb", key: h.keyA)
            #expect(badType.status == .badRequest && badType.errorCode == "invalid_field")
            let badShow = try await h.request(.get, "/v1/apps/\(Self.app)/live-activities/\(long)", key: h.keyA)
            #expect(badShow.status == .badRequest && badShow.errorCode == "invalid_field")

            // Bodies are held to a few KiB whatever the configured limit.
            let padding = String(repeating: "x", count: 9000)
            let large = try await h.request(
                .post, Self.startURI(), key: h.keyA,
                json: #"{"activity_type": "T", "token": "\#(Self.startToken)", "pad": "\#(padding)"}"#)
            #expect(large.status == .contentTooLarge && large.errorCode == "body_too_large")

            #expect(
                try await h.store.startTokens(app: Self.app, activityType: "T", devices: .all, limit: 5).tokens
                    .isEmpty)
            #expect(try await h.store.activitySummary(app: Self.app, activityID: "order-1") == nil)
        }
    }
}
