import APNSCore
import FCMCore
import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `"platform"` and `"fcm_kind"` in device registration, and Android tokens in paths (issue 36).
@Suite(.needsServices) struct DevicePlatformRoutesTests {
    static let devices = "/v1/apps/\(APIHarness.appA)/devices"
    /// A registration token as FCM issues them: mixed case, `:`, `-` and `_`.
    static let androidToken = "cAnd-1:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_AbQ"
    static let fid = "dIsVQ2QlSSyDRxQaO6LBcb"

    /// `text` percent-encoded for a path segment the strict way (`:` too).
    static func path(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-_")
        return "\(devices)/" + text.addingPercentEncoding(withAllowedCharacters: allowed)!
    }

    @Test func androidDevicesOfBothKindsAreRegisteredShownAndDeleted() async throws {
        try await APIHarness.run { h in
            let token = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(Self.androidToken)", "platform": "android", "user_id": "u1"}"#)
            #expect(token.status == .created)
            #expect(token.object["token"] as? String == Self.androidToken)
            #expect(token.object["platform"] as? String == "android")
            #expect(token.object["fcm_kind"] as? String == "token")
            let fid = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(Self.fid)", "platform": "android", "fcm_kind": "fid"}"#)
            #expect(fid.status == .created)
            #expect(fid.object["fcm_kind"] as? String == "fid")
            let ios = try await h.request(
                .post, Self.devices, key: h.keyA, json: #"{"token": "\#(APIHarness.token(1))"}"#)
            #expect(ios.object["platform"] as? String == "ios")
            #expect(ios.object.keys.contains("fcm_kind") && ios.object["fcm_kind"] is NSNull)

            let stored = try #require(
                try await h.store.device(app: APIHarness.appA, token: DeviceToken(trustedHex: Self.androidToken)))
            #expect(stored.platform == .android && stored.fcmKind == .token && stored.userID == "u1")

            // GET and DELETE by path: the `:` of a registration token as it is and percent-encoded.
            for uri in ["\(Self.devices)/\(Self.androidToken)", Self.path(Self.androidToken)] {
                let shown = try await h.request(.get, uri, key: h.keyA)
                #expect(shown.status == .ok, "\(uri)")
                #expect(shown.object["token"] as? String == Self.androidToken)
                #expect(
                    shown.object["platform"] as? String == "android" && shown.object["fcm_kind"] as? String == "token")
            }
            let shownFID = try await h.request(.get, "\(Self.devices)/\(Self.fid)", key: h.keyA)
            #expect(shownFID.object["fcm_kind"] as? String == "fid")
            #expect(try await h.request(.delete, Self.path(Self.androidToken), key: h.keyA).status == .noContent)
            #expect(try await h.request(.get, Self.path(Self.androidToken), key: h.keyA).status == .notFound)
            #expect(try await h.request(.delete, "\(Self.devices)/\(Self.fid)", key: h.keyA).status == .noContent)
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 1)
        }
    }

    @Test func aPathTokenIsReadByEitherPlatformsRulesTheIOSReadingFirst() async throws {
        try await APIHarness.run { h in
            // Upper-case hex: an iOS token (kept as lowercase hex) and, as given, an Android registration token.
            let upper = String(repeating: "AB12", count: 16)
            _ = try await h.request(
                .post, Self.devices, key: h.keyA, json: #"{"token": "\#(upper)", "platform": "android"}"#)
            let android = try await h.request(.get, "\(Self.devices)/\(upper)", key: h.keyA)
            #expect(android.object["platform"] as? String == "android" && android.object["token"] as? String == upper)
            _ = try await h.request(.post, Self.devices, key: h.keyA, json: #"{"token": "\#(upper)"}"#)
            let ios = try await h.request(.get, "\(Self.devices)/\(upper)", key: h.keyA)
            #expect(ios.object["platform"] as? String == "ios" && ios.object["token"] as? String == upper.lowercased())

            // Neither platform's token: a 400 naming both rules, never the token.
            for bad in ["short", "has%20space%20in%20it%20and%20more", "bang!bang!bang!bang!bang!"] {
                let response = try await h.request(.get, "\(Self.devices)/\(bad)", key: h.keyA)
                #expect(response.status == .badRequest, "\(bad)")
                #expect(response.errorCode == "invalid_token")
                #expect(response.text.contains("not a device token of any platform"))
                #expect(response.text.contains("Android registration token (20 to 4096 characters"))
                #expect(!response.text.contains("bang") && !response.text.contains("short"))
            }
        }
    }

    @Test(arguments: [
        // body, the words of the answer
        (#""platform": "windows""#, "platform must be ios, android or web"),
        (#""platform": "ios", "fcm_kind": "token""#, "fcm_kind is for Android devices only"),
        (#""fcm_kind": "fid""#, "fcm_kind is for Android devices only"),
        (#""platform": "android", "fcm_kind": "apns""#, "fcm_kind must be token or fid"),
    ])
    func platformAndKindAreCheckedBeforeAnythingIsStored(fields: String, expected: String) async throws {
        try await APIHarness.run { h in
            let response = try await h.request(
                .post, Self.devices, key: h.keyA, json: #"{"token": "\#(Self.androidToken)", \#(fields)}"#)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_field")
            #expect(response.text.contains(expected))
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test(
        arguments: [
            // token, platform, fcm_kind, the words of the answer: each platform's own rule, named with the field
            (androidToken, "ios", nil, "token: device token is not hexadecimal"),
            ("abcdef0123456789", "android", nil, "FCM registration token is too short (16 characters, at least 20)"),
            (androidToken + "!", "android", nil, "FCM registration token has a character not allowed (!)"),
            (androidToken, "android", "fid", "Firebase installation ID has 47 characters, not 22"),
            ("aIsVQ2QlSSyDRxQaO6LBcb", "android", "fid", "starts with a, not c, d, e or f"),
            ("dIsVQ2QlSSyDRxQaO6L:cb", "android", "fid", "installation id (fcm_kind fid) is 22 characters"),
        ] as [(String, String, String?, String)])
    func tokensAreHeldToTheirPlatformsRulesWithoutEcho(token: String, platform: String, kind: String?, expected: String)
        async throws
    {
        try await APIHarness.run { h in
            let kindField = kind.map { #", "fcm_kind": "\#($0)""# } ?? ""
            let response = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(token)", "platform": "\#(platform)"\#(kindField)}"#)
            #expect(response.status == .badRequest)
            #expect(response.errorCode == "invalid_token")
            #expect(response.text.contains(#""message":"token: "#), "the field first: \(response.text)")
            #expect(response.text.contains(expected), "\(response.text)")
            #expect(!response.text.contains(token) && !response.text.contains("APA91b"))
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test func aTokensPlatformIsKeptAndAReplacementStaysOnItsPlatform() async throws {
        try await APIHarness.run { h in
            let shared = String(repeating: "ab12", count: 16)
            _ = try await h.request(.post, Self.devices, key: h.keyA, json: #"{"token": "\#(shared)"}"#)
            let conflict = try await h.request(
                .post, Self.devices, key: h.keyA, json: #"{"token": "\#(shared)", "platform": "android"}"#)
            #expect(conflict.status == .conflict)
            #expect(conflict.errorCode == "platform_conflict")
            #expect(conflict.text.contains("the token is registered as an iOS device"))
            #expect(!conflict.text.contains(shared))

            // Registration token to installation id: the app moved to FIDs; the fields come along.
            _ = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(Self.androidToken)", "platform": "android", "topics": ["news"]}"#)
            let moved = try await h.request(
                .post, Self.devices, key: h.keyA,
                json:
                    #"{"token": "\#(Self.fid)", "old_token": "\#(Self.androidToken)", "platform": "android", "fcm_kind": "fid"}"#
            )
            #expect(moved.status == .created)
            #expect(moved.object["replaced"] as? Bool == true && moved.object["fcm_kind"] as? String == "fid")
            #expect(moved.object["topics"] as? [String] == ["news"])

            // old_token is held to the registration's platform: an Android token is no iOS old token.
            let badOld = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(APIHarness.token(2))", "old_token": "\#(Self.androidToken)"}"#)
            #expect(badOld.status == .badRequest && badOld.errorCode == "invalid_token")
            #expect(badOld.text.contains("old_token: device token is not hexadecimal"))
            // An iOS device as the old token of an Android one: a conflict naming old_token.
            let crossed = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "\#(Self.androidToken)", "old_token": "\#(shared)", "platform": "android"}"#)
            #expect(crossed.status == .conflict && crossed.errorCode == "platform_conflict")
            #expect(crossed.text.contains("the old_token is registered as an iOS device"))
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 2)
        }
    }

    @Test func theDeadTokenReportCarriesThePlatform() async throws {
        try await APIHarness.run { h in
            _ = try await h.request(
                .post, Self.devices, key: h.keyA,
                json: #"{"token": "-\#(Self.androidToken)", "platform": "android"}"#)
            _ = try await h.request(
                .post, Self.devices, key: h.keyA, json: #"{"token": "\#(APIHarness.token(3))"}"#)
            _ = try await h.store.startJob(id: "j", app: APIHarness.appA, targetKind: "all")
            var writeBack = WriteBack(jobID: "j", app: APIHarness.appA)
            writeBack.prunes = ["-" + Self.androidToken, APIHarness.token(3)].map {
                .init(token: DeviceToken(trustedHex: $0), reason: "Unregistered", apnsTimestamp: nil)
            }
            #expect(try await h.store.write(writeBack) == 2)
            let report = "/v1/apps/\(APIHarness.appA)/reports/dead-tokens?since=1d"
            let json = try await h.request(.get, report, key: h.keyA)
            let rows = try #require(json.object["rows"] as? [[String: Any]])
            let android = try #require(rows.first { $0["token"] as? String == "-" + Self.androidToken })
            #expect(android["platform"] as? String == "android" && android["fcm_kind"] as? String == "token")
            let ios = try #require(rows.first { $0["token"] as? String == APIHarness.token(3) })
            #expect(ios["platform"] as? String == "ios" && ios["fcm_kind"] is NSNull)

            let csv = try await h.request(.get, report + "&format=csv", key: h.keyA)
            let lines = csv.text.split(separator: "\n").map(String.init)
            #expect(lines.first == "token,reason,apns_timestamp,job_id,recorded_at,platform,fcm_kind,endpoint_origin")
            // The token as it is, even with a leading `-` (no `'` guard: a token cannot hold a formula).
            #expect(
                lines.contains {
                    $0.hasPrefix("-\(Self.androidToken),Unregistered,,j,") && $0.hasSuffix(",android,token,")
                })
            #expect(lines.contains { $0.hasPrefix("\(APIHarness.token(3)),") && $0.hasSuffix(",ios,,") })
        }
    }
}
