import Foundation

/// A notification body: the `aps` dictionary and the app's custom keys beside it (APNs ignores custom keys inside
/// `aps`), encoded as one JSON object.
public struct APNSPayload: Sendable, Hashable, Codable {
    public var aps: APS
    /// Keys beside `aps`; the key `aps` itself is not allowed here.
    public var custom: [String: PayloadValue]

    public init(aps: APS, custom: [String: PayloadValue] = [:]) {
        self.aps = aps
        self.custom = custom
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        aps = try container.decodeIfPresent(APS.self, forKey: Key(stringValue: "aps")) ?? APS()
        var custom: [String: PayloadValue] = [:]
        for key in container.allKeys where key.stringValue != "aps" {
            custom[key.stringValue] = try container.decode(PayloadValue.self, forKey: key)
        }
        self.custom = custom
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (key, value) in custom where key != "aps" {
            try container.encode(value, forKey: Key(stringValue: key))
        }
        try container.encode(aps, forKey: Key(stringValue: "aps"))
    }

    /// The JSON body (keys sorted, so equal payloads are equal bytes).
    public func encoded() throws(APNSPayloadError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw APNSPayloadError(.notEncodable, "the payload cannot be encoded as JSON (a number is not finite)")
        }
    }
}

/// A rule of Apple's that a payload breaks. The message names the rule and the value, never the payload's text.
public struct APNSPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which rule.
    public struct Rule: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let notEncodable = Rule(rawValue: "not_encodable")
        public static let tooLarge = Rule(rawValue: "payload_too_large")
        public static let customKeyAPS = Rule(rawValue: "custom_key_aps")
        public static let negativeBadge = Rule(rawValue: "negative_badge")
        public static let soundVolume = Rule(rawValue: "sound_volume")
        public static let relevanceScore = Rule(rawValue: "relevance_score")
        public static let background = Rule(rawValue: "background")
        public static let liveActivity = Rule(rawValue: "live_activity")
        public static let emptyAlert = Rule(rawValue: "empty_alert")

        public var description: String { rawValue }
    }

    public var rule: Rule
    public var message: String

    public init(_ rule: Rule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    public var description: String { message }
}

extension APNSPayload {
    /// Checks the payload against Apple's rules for `pushType` and returns its encoded bytes: size limit per push
    /// type, badge not negative, critical sound volume 0–1, relevance score 0–1 (any value for Live Activities),
    /// background pushes with `content-available` and without alert, badge or sound, Live Activity keys complete.
    @discardableResult
    public func validate(for pushType: PushType = .alert) throws(APNSPayloadError) -> [UInt8] {
        if custom["aps"] != nil {
            throw APNSPayloadError(.customKeyAPS, "custom keys must not include aps")
        }
        if let badge = aps.badge, badge < 0 {
            throw APNSPayloadError(.negativeBadge, "badge \(badge) is negative")
        }
        if case .critical(let sound) = aps.sound, let volume = sound.volume, !(0...1).contains(volume) {
            throw APNSPayloadError(.soundVolume, "sound volume \(volume) is not between 0 and 1")
        }
        if let score = aps.relevanceScore {
            guard score.isFinite else { throw APNSPayloadError(.relevanceScore, "relevance-score is not a number") }
            if pushType != .liveactivity && !(0...1).contains(score) {
                throw APNSPayloadError(.relevanceScore, "relevance-score \(score) is not between 0 and 1")
            }
        }
        if case .content(let content) = aps.alert, content == APNSAlert.Content() {
            throw APNSPayloadError(.emptyAlert, "alert dictionary is empty")
        }
        if pushType == .background {
            guard aps.contentAvailable else {
                throw APNSPayloadError(.background, "background notifications need content-available")
            }
            guard aps.alert == nil, aps.badge == nil, aps.sound == nil else {
                throw APNSPayloadError(.background, "background notifications must not have alert, badge or sound")
            }
        }
        if pushType == .liveactivity {
            guard let event = aps.event else {
                throw APNSPayloadError(.liveActivity, "Live Activity notifications need an event (start, update, end)")
            }
            guard aps.timestamp != nil else {
                throw APNSPayloadError(.liveActivity, "Live Activity notifications need a timestamp")
            }
            if event == .start {
                guard aps.attributesType != nil, aps.attributes != nil, aps.contentState != nil else {
                    throw APNSPayloadError(
                        .liveActivity,
                        "a Live Activity start needs attributes-type, attributes and content-state"
                    )
                }
            } else if event == .update, aps.contentState == nil {
                throw APNSPayloadError(.liveActivity, "a Live Activity update needs content-state")
            }
        }
        let bytes = try encoded()
        let limit = pushType.maximumPayloadSize
        guard bytes.count <= limit else {
            throw APNSPayloadError(
                .tooLarge,
                "payload is \(bytes.count) bytes, over the \(limit)-byte limit for push type \(pushType)"
            )
        }
        return bytes
    }
}
