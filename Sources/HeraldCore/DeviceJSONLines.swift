import Foundation
import WebPushCore

/// The JSON Lines form of a list of web subscriptions (`herald devices import --format jsonl`): one object per line,
/// `{"user_id": …, "locale": …, "topics": […], "subscription": {…}}`, where `subscription` is what the browser's
/// `PushSubscription.toJSON()` gives (`endpoint`, `expirationTime`, `keys.p256dh`, `keys.auth`). `user_id`, `locale`
/// and `topics` may be left out or null. The rules are the API's and the CSV's (`DeviceFields`); an unknown field is
/// refused. A bad line is reported with its number and the rule it broke, never its endpoint or keys.
public enum DeviceJSONLines {
    /// The longest line read, in bytes: a subscription with 100 topics of 128 characters fits many times over.
    public static let maximumLineBytes = 64 * 1024

    /// Parses one line (1-based `lineNumber` for errors). Blank lines return nil.
    public static func parse(_ line: String, lineNumber: Int) throws(DeviceCSV.RowError) -> DeviceRecord? {
        if line.utf8.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
            return nil
        }
        func refuse(_ message: String) -> DeviceCSV.RowError { DeviceCSV.RowError(line: lineNumber, message: message) }
        guard line.utf8.count <= maximumLineBytes else {
            throw refuse("the line is over \(maximumLineBytes) bytes")
        }
        guard
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]))
                as? [String: Any]
        else {
            throw refuse("the line is not a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: {
            !["user_id", "locale", "topics", "subscription"].contains($0)
        }) {
            throw refuse("unknown field \(unknown); a line has user_id, locale, topics and subscription")
        }
        let userID = try optionalString(object["user_id"], field: "user_id", refuse)
        let locale = try optionalString(object["locale"], field: "locale", refuse)
        if let userID, let problem = DeviceFields.userIDProblem(userID) { throw refuse(problem) }
        if let locale, let problem = DeviceFields.localeProblem(locale) { throw refuse(problem) }
        var topics: [String] = []
        if let value = object["topics"], !(value is NSNull) {
            guard let list = value as? [Any], let strings = list as? [String], strings.count == list.count else {
                throw refuse("topics must be an array of strings")
            }
            guard strings.count <= DeviceFields.maximumTopics else {
                throw refuse("topics has \(strings.count) entries; at most \(DeviceFields.maximumTopics) are allowed")
            }
            for topic in strings {
                if let problem = DeviceFields.topicProblem(topic) { throw refuse(problem) }
            }
            topics = strings
        }
        guard let subscription = object["subscription"] as? [String: Any] else {
            throw refuse("subscription is required: an object, as PushSubscription.toJSON() gives it")
        }
        if let unknown = subscription.keys.sorted().first(where: {
            !["endpoint", "expirationTime", "keys"].contains($0)
        }) {
            throw refuse("unknown field subscription.\(unknown); a subscription has endpoint, expirationTime and keys")
        }
        guard let endpoint = subscription["endpoint"] as? String else {
            throw refuse("subscription.endpoint is required: a string")
        }
        guard let keys = subscription["keys"] as? [String: Any] else {
            throw refuse("subscription.keys is required: an object with p256dh and auth")
        }
        if let unknown = keys.keys.sorted().first(where: { $0 != "p256dh" && $0 != "auth" }) {
            throw refuse("unknown field subscription.keys.\(unknown); the keys are p256dh and auth")
        }
        guard let p256dh = keys["p256dh"] as? String, let auth = keys["auth"] as? String else {
            throw refuse("subscription.keys.p256dh and subscription.keys.auth are required: strings")
        }
        var expiration: Int64? = nil
        if let value = subscription["expirationTime"], !(value is NSNull) {
            guard let number = value as? NSNumber, !(value is Bool),
                let milliseconds = Int64(exactly: number.doubleValue)
            else {
                throw refuse("subscription.expirationTime must be milliseconds since 1970 (a whole number) or null")
            }
            expiration = milliseconds
        }
        do {
            let parsed = try DeviceFields.webSubscription(
                endpoint: endpoint, p256dh: p256dh, auth: auth, expirationTime: expiration, names: .api)
            return DeviceRecord(webSubscription: parsed, userID: userID, locale: locale, topics: topics)
        } catch {
            throw refuse(error.message)
        }
    }

    private static func optionalString(
        _ value: Any?, field: String, _ refuse: (String) -> DeviceCSV.RowError
    ) throws(DeviceCSV.RowError) -> String? {
        guard let value, !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw refuse("\(field) must be a string or null") }
        return text
    }
}
