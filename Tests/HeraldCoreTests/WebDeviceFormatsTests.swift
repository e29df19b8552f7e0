import APNSCore
import Foundation
import HeraldCore
import HeraldTestSupport
import Testing
import WebPushCore

/// Web subscriptions in the devices CSV (three columns after fcm_kind) and in JSON Lines: the API's rules, a bad row
/// named by line and rule, never by endpoint or key.
@Suite struct WebDeviceFormatsTests {
    typealias Fixtures = WebSubscriptionFixtures
    static let endpoint = Fixtures.endpoint(1)
    static let keys = "\(Fixtures.p256dh),\(Fixtures.auth)"

    @Test func theHeaderMayAddTheWebColumnsAfterFCMKind() throws {
        #expect(
            try DeviceCSV.validateHeader("token,user_id,locale,topics,platform,fcm_kind,p256dh,auth,expiration_time")
                == 9)
        for bad in [
            "token,user_id,locale,topics,platform,fcm_kind,p256dh",
            "token,user_id,locale,topics,platform,fcm_kind,p256dh,auth",
            "token,user_id,locale,topics,p256dh,auth,expiration_time",
        ] {
            #expect(throws: DeviceCSV.RowError.self, "\(bad)") { try DeviceCSV.validateHeader(bad) }
        }
    }

    @Test func aWebRowCarriesItsSubscriptionAndOtherRowsLeaveTheColumnsEmpty() throws {
        let web = try #require(
            try DeviceCSV.parse(
                "\(Self.endpoint),u1,fr,news;sport,web,,\(Self.keys),1900000000000", lineNumber: 2, columns: 9))
        #expect(web.platform == .web && web.token.hex == Self.endpoint && web.fcmKind == nil)
        #expect(web.webSubscription == Fixtures.subscription(1, expirationTime: 1_900_000_000_000))
        #expect(web.userID == "u1" && web.topics == ["news", "sport"])
        let noExpiry = try #require(
            try DeviceCSV.parse("\(Self.endpoint),,,,web,,\(Self.keys),", lineNumber: 2, columns: 9))
        #expect(noExpiry.webSubscription == Fixtures.subscription(1))
        let ios = try #require(
            try DeviceCSV.parse("\(String(repeating: "ab", count: 32)),,,,,,,,", lineNumber: 2, columns: 9))
        #expect(ios.platform == .ios && ios.webSubscription == nil)
    }

    @Test(arguments: [
        ("\(endpoint),,,,web,,,,", "a web subscription needs p256dh and auth"),
        ("\(endpoint),,,,web,,\(Fixtures.p256dh),,", "a web subscription needs p256dh and auth"),
        ("\(endpoint),,,,web,token,\(keys),", "fcm_kind is for Android devices only"),
        ("\(endpoint),,,,web,,\(keys),soon", "expiration_time must be milliseconds since 1970"),
        ("\(endpoint),,,,web,,\(keys),99999999999999999", "expiration_time must be milliseconds since 1970, 0 to"),
        ("\(endpoint),,,,web,,AAAA,\(Fixtures.auth),", "p256dh is 3 bytes"),
        ("\(endpoint),,,,web,,\(Fixtures.p256dh),AAAA,", "auth is 3 bytes; it must be 16"),
        ("http://push.example/secret,,,,web,,\(keys),", "token: the endpoint must be an https URL"),
        ("\(String(repeating: "ab", count: 32)),,,,ios,,\(keys),", "p256dh is for web subscriptions only"),
        ("\(String(repeating: "ab", count: 32)),,,,,,,,5", "expiration_time is for web subscriptions only"),
    ])
    func aBadWebRowNamesItsLineAndRuleButNeverTheEndpointOrKeys(line: String, expected: String) {
        #expect {
            _ = try DeviceCSV.parse(line, lineNumber: 7, columns: 9)
        } throws: { error in
            guard let error = error as? DeviceCSV.RowError else { return false }
            return error.line == 7 && error.message.contains(expected) && !error.message.contains("secret")
                && !error.message.contains(Fixtures.p256dh) && !error.message.contains("dGVzdC1z")
        }
    }

    @Test func aWebRowNeedsTheWebColumns() {
        #expect {
            _ = try DeviceCSV.parse("\(Self.endpoint),,,,web,", lineNumber: 3, columns: 6)
        } throws: { error in
            (error as? DeviceCSV.RowError)?.message.contains("the p256dh, auth and expiration_time columns") == true
        }
    }

    static func line(_ subscription: String, _ rest: String = #""user_id": "u1", "topics": ["news"]"#) -> String {
        #"{\#(rest), "subscription": \#(subscription)}"#
    }

    static func subscription(_ endpoint: String = endpoint, expirationTime: String = "null", keys: String? = nil)
        -> String
    {
        let keys = keys ?? #"{"p256dh": "\#(Fixtures.p256dh)", "auth": "\#(Fixtures.auth)"}"#
        return #"{"endpoint": "\#(endpoint)", "expirationTime": \#(expirationTime), "keys": \#(keys)}"#
    }

    @Test func aJSONLineIsAWebSubscriptionAsTheBrowserGivesIt() throws {
        let record = try #require(
            try DeviceJSONLines.parse(Self.line(Self.subscription(expirationTime: "1900000000000")), lineNumber: 1))
        #expect(record.platform == .web && record.token.hex == Self.endpoint && record.userID == "u1")
        #expect(record.webSubscription == Fixtures.subscription(1, expirationTime: 1_900_000_000_000))
        #expect(record.topics == ["news"])
        let bare = try #require(try DeviceJSONLines.parse(#"{"subscription": \#(Self.subscription())}"#, lineNumber: 1))
        #expect(bare.userID == nil && bare.locale == nil && bare.topics.isEmpty)
        #expect(try DeviceJSONLines.parse("  ", lineNumber: 2) == nil)
    }

    @Test(arguments: [
        ("[1, 2]", "the line is not a JSON object"),
        (#"{"subscription": "#, "the line is not a JSON object"),
        (line(subscription(), #""user": "u1""#), "unknown field user"),
        (line(subscription(), #""topics": "news""#), "topics must be an array of strings"),
        (line(subscription(), #""locale": "not a locale at all""#), "locale is not a BCP 47 tag"),
        (#"{"user_id": "u1"}"#, "subscription is required"),
        (
            line(#"{"endpoint": "https://push.example/secret", "keys": {"p256dh": "a", "auth": "b"}, "extra": 1}"#),
            "unknown field subscription.extra"
        ),
        (line(#"{"keys": {"p256dh": "a", "auth": "b"}}"#), "subscription.endpoint is required"),
        (
            line(subscription(keys: #"{"p256dh": "\#(Fixtures.p256dh)"}"#)),
            "subscription.keys.p256dh and subscription.keys.auth are required"
        ),
        (line(subscription(expirationTime: "1.5")), "subscription.expirationTime must be milliseconds since 1970"),
        (line(subscription("http://push.example/secret")), "subscription.endpoint: the endpoint must be an https URL"),
        (
            line(
                subscription(
                    keys: #"{"p256dh": "B\#(String(repeating: "A", count: 86))", "auth": "\#(Fixtures.auth)"}"#)),
            "subscription.keys.p256dh is not a point on the P-256 curve"
        ),
    ])
    func aBadJSONLineNamesItsLineAndRuleButNeverTheEndpointOrKeys(line: String, expected: String) {
        #expect {
            _ = try DeviceJSONLines.parse(line, lineNumber: 4)
        } throws: { error in
            guard let error = error as? DeviceCSV.RowError else { return false }
            return error.line == 4 && error.message.contains(expected) && !error.message.contains("secret")
                && !error.message.contains(Fixtures.p256dh)
        }
    }
}
