import APNSCore
import FCMCore
import WebPushCore

/// A device as the registry holds it.
public struct DeviceRecord: Sendable, Hashable {
    public var token: DeviceToken
    public var userID: String?
    public var locale: String?
    public var topics: [String]
    /// Which provider reaches the device.
    public var platform: DevicePlatform
    /// For an Android device, the field its token goes in (`token` or `fid`); nil for iOS.
    public var fcmKind: FCMTarget.Kind?
    /// For a web device, its subscription (whose endpoint is `token`); nil for the other platforms.
    public var webSubscription: WebPushSubscription?

    public init(
        token: DeviceToken, userID: String? = nil, locale: String? = nil, topics: [String] = [],
        platform: DevicePlatform = .ios, fcmKind: FCMTarget.Kind? = nil
    ) {
        self.token = token
        self.userID = userID
        self.locale = locale
        self.topics = topics
        self.platform = platform
        // An iOS device has no FCM kind; an Android one has one, a registration token unless said otherwise.
        self.fcmKind = platform == .android ? (fcmKind ?? .token) : nil
        self.webSubscription = nil
    }

    /// A web device: its token is the subscription's endpoint.
    public init(
        webSubscription: WebPushSubscription, userID: String? = nil, locale: String? = nil, topics: [String] = []
    ) {
        self.token = DeviceToken(trustedHex: webSubscription.endpoint.url)
        self.userID = userID
        self.locale = locale
        self.topics = topics
        self.platform = .web
        self.fcmKind = nil
        self.webSubscription = webSubscription
    }
}

/// The CSV form of a device list: header `token,user_id,locale,topics`, optionally followed by `platform` and
/// `fcm_kind`, and then by `p256dh`, `auth` and `expiration_time` (a web subscription's keys and expiration, its
/// token being its endpoint); topics separated by `;`.
///
/// Fields may be quoted with `"` (a quoted field may contain commas and `""`). An iOS token may be in the
/// `<ad853c20 3a9b…>` form. `platform` is `ios` (the default, also for an empty field or a file without the column)
/// `android` or `web`; `fcm_kind` is `token` (the default for Android) or `fid`, and empty otherwise. A web row
/// needs `p256dh` and `auth` (`expiration_time`, milliseconds since 1970, may be empty), which stay empty for the
/// other platforms. A bad row is reported with its line number and the rule it broke, never its token or keys.
public enum DeviceCSV {
    /// The header of the oldest files, which hold iOS devices only; still accepted.
    public static let header = ["token", "user_id", "locale", "topics"]
    /// The full header, with each device's platform and FCM kind: what `herald devices export` writes.
    public static let platformHeader = header + ["platform", "fcm_kind"]
    /// The header with a web subscription's columns too: what `herald devices export` writes.
    public static let webHeader = platformHeader + ["p256dh", "auth", "expiration_time"]

    /// A row that was rejected.
    public struct RowError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }

        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
    }

    /// Checks the header line, and returns how many columns the rows have: 4 (`header`), 5 (with `platform`), 6
    /// (`platformHeader`) or 9 (`webHeader`).
    @discardableResult
    public static func validateHeader(_ line: String) throws(RowError) -> Int {
        let fields = ((try? split(line, lineNumber: 1)) ?? []).map { $0.lowercased() }
        guard [4, 5, 6, 9].contains(fields.count), fields == Array(webHeader.prefix(fields.count)) else {
            throw RowError(
                line: 1,
                message:
                    "header must be \(header.joined(separator: ",")), optionally followed by platform and fcm_kind,"
                    + " and then by p256dh, auth and expiration_time"
            )
        }
        return fields.count
    }

    /// Parses one data line (1-based `lineNumber` for errors) of a file whose header has `columns` columns
    /// (`validateHeader`). Blank lines return nil.
    public static func parse(_ line: String, lineNumber: Int, columns: Int = header.count) throws(RowError)
        -> DeviceRecord?
    {
        if line.allSatisfy({ $0 == " " || $0 == "\r" }) { return nil }
        // PostgreSQL's text refuses U+0000, and a C string would end there: the line is refused as a whole.
        guard !line.utf8.contains(0) else {
            throw RowError(line: lineNumber, message: "the line holds a NUL byte (U+0000)")
        }
        let fields = try split(line, lineNumber: lineNumber)
        guard fields.count == columns else {
            throw RowError(line: lineNumber, message: "expected \(columns) fields, found \(fields.count)")
        }
        let platformField = columns > 4 ? fields[4] : ""
        let kindField = columns > 5 ? fields[5] : ""
        let platform: DevicePlatform
        switch platformField {
        case "", "ios": platform = .ios
        case "android": platform = .android
        case "web": platform = .web
        default: throw RowError(line: lineNumber, message: "platform must be ios, android or web (or empty, for ios)")
        }
        let web = columns > 6 ? Array(fields[6..<9]) : ["", "", ""]
        if platform != .web, let filled = zip(["p256dh", "auth", "expiration_time"], web).first(where: { !$1.isEmpty })
        {
            throw RowError(line: lineNumber, message: "\(filled.0) is for web subscriptions only; leave it empty")
        }
        let kind: FCMTarget.Kind?
        switch (platform, kindField) {
        case (.ios, ""): kind = nil
        case (.ios, _):
            throw RowError(line: lineNumber, message: "fcm_kind is for Android devices only; leave it empty")
        case (.android, ""), (.android, "token"): kind = .token
        case (.android, "fid"): kind = .fid
        case (.android, _):
            throw RowError(line: lineNumber, message: "fcm_kind must be token or fid (or empty, for token)")
        case (.web, ""): kind = nil
        case (.web, _):
            throw RowError(line: lineNumber, message: "fcm_kind is for Android devices only; leave it empty")
        }
        // The rules of the API's registration (DeviceFields, DeviceAddress), so that a file imports what the API
        // registers.
        let token: DeviceToken
        var subscription: WebPushSubscription? = nil
        do {
            if platform == .web {
                guard columns > 6 else {
                    throw RowError(
                        line: lineNumber,
                        message: "a web subscription needs its keys: the p256dh, auth and expiration_time columns")
                }
                guard !web[0].isEmpty, !web[1].isEmpty else {
                    throw RowError(line: lineNumber, message: "a web subscription needs p256dh and auth")
                }
                var expiration: Int64? = nil
                if !web[2].isEmpty {
                    guard web[2].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                        let milliseconds = Int64(web[2])
                    else {
                        throw RowError(
                            line: lineNumber,
                            message: "expiration_time must be milliseconds since 1970 (digits), or empty for none")
                    }
                    expiration = milliseconds
                }
                let parsed = try DeviceFields.webSubscription(
                    endpoint: fields[0], p256dh: web[0], auth: web[1], expirationTime: expiration, names: .csv)
                subscription = parsed
                token = DeviceToken(trustedHex: parsed.endpoint.url)
            } else {
                token = try DeviceFields.token(fields[0], platform: platform, fcmKind: kind)
            }
        } catch let error as RowError {
            throw error
        } catch let error as JobError {
            throw RowError(line: lineNumber, message: error.message)
        } catch {
            throw RowError(line: lineNumber, message: "\(error)")
        }
        let userID = fields[1].isEmpty ? nil : fields[1]
        let locale = fields[2].isEmpty ? nil : fields[2]
        if let userID, let problem = DeviceFields.userIDProblem(userID) {
            throw RowError(line: lineNumber, message: problem)
        }
        if let locale, let problem = DeviceFields.localeProblem(locale) {
            throw RowError(line: lineNumber, message: problem)
        }
        let topics = fields[3].split(separator: ";").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
        guard topics.count <= DeviceFields.maximumTopics else {
            throw RowError(
                line: lineNumber,
                message: "topics has \(topics.count) entries; at most \(DeviceFields.maximumTopics) are allowed")
        }
        for topic in topics {
            if let problem = DeviceFields.topicProblem(topic) { throw RowError(line: lineNumber, message: problem) }
        }
        if let subscription {
            return DeviceRecord(webSubscription: subscription, userID: userID, locale: locale, topics: topics)
        }
        return DeviceRecord(
            token: token, userID: userID, locale: locale, topics: topics, platform: platform, fcmKind: kind)
    }

    /// Splits a CSV line into fields, honouring quotes.
    static func split(_ line: String, lineNumber: Int) throws(RowError) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = line.makeIterator()
        var pending: Character? = nil
        while let c = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            pending = next
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                fields.append(field.trimmingSpaces())
                field = ""
            } else if c != "\r" {
                field.append(c)
            }
        }
        guard !quoted else { throw RowError(line: lineNumber, message: "unterminated quoted field") }
        fields.append(field.trimmingSpaces())
        return fields
    }
}

extension String {
    func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " { view = view.dropFirst() }
        while view.last == " " { view = view.dropLast() }
        return String(view)
    }
}
