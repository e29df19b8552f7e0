/// `aps.alert`: a plain string (the body), or a dictionary of title, subtitle, body and their localisation keys.
public enum APNSAlert: Sendable, Hashable, Codable {
    /// `"alert": "text"` — shown as the body.
    case text(String)
    /// `"alert": {…}`.
    case content(Content)

    /// The dictionary form, with Apple's key names.
    public struct Content: Sendable, Hashable, Codable {
        public var title: String?
        public var subtitle: String?
        public var body: String?
        /// `launch-image`.
        public var launchImage: String?
        /// `title-loc-key` and `title-loc-args`.
        public var titleLocKey: String?
        public var titleLocArgs: [String]?
        /// `subtitle-loc-key` and `subtitle-loc-args`.
        public var subtitleLocKey: String?
        public var subtitleLocArgs: [String]?
        /// `loc-key` and `loc-args` (the body's localisation).
        public var locKey: String?
        public var locArgs: [String]?

        enum CodingKeys: String, CodingKey {
            case title, subtitle, body
            case launchImage = "launch-image"
            case titleLocKey = "title-loc-key"
            case titleLocArgs = "title-loc-args"
            case subtitleLocKey = "subtitle-loc-key"
            case subtitleLocArgs = "subtitle-loc-args"
            case locKey = "loc-key"
            case locArgs = "loc-args"
        }

        public init(
            title: String? = nil,
            subtitle: String? = nil,
            body: String? = nil,
            launchImage: String? = nil,
            titleLocKey: String? = nil,
            titleLocArgs: [String]? = nil,
            subtitleLocKey: String? = nil,
            subtitleLocArgs: [String]? = nil,
            locKey: String? = nil,
            locArgs: [String]? = nil
        ) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.launchImage = launchImage
            self.titleLocKey = titleLocKey
            self.titleLocArgs = titleLocArgs
            self.subtitleLocKey = subtitleLocKey
            self.subtitleLocArgs = subtitleLocArgs
            self.locKey = locKey
            self.locArgs = locArgs
        }
    }

    /// A dictionary alert with a title and a body.
    public static func alert(title: String? = nil, subtitle: String? = nil, body: String? = nil) -> APNSAlert {
        .content(Content(title: title, subtitle: subtitle, body: body))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            self = .content(try container.decode(Content.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let text): try container.encode(text)
        case .content(let content): try container.encode(content)
        }
    }
}

/// `aps.sound`: the name of a sound file, or for critical alerts a dictionary of `critical`, `name` and `volume`.
public enum APNSSound: Sendable, Hashable, Codable {
    /// `"sound": "name"` (`default` for the system sound).
    case named(String)
    /// `"sound": {"critical": 1, "name": …, "volume": …}`.
    case critical(Critical)

    /// The system sound.
    public static let `default` = APNSSound.named("default")

    /// The dictionary form.
    public struct Critical: Sendable, Hashable, Codable {
        /// `critical`: 1 plays the sound as a critical alert.
        public var isCritical: Bool
        public var name: String
        /// 0 (silent) to 1 (full volume).
        public var volume: Double?

        enum CodingKeys: String, CodingKey {
            case isCritical = "critical"
            case name, volume
        }

        public init(name: String, volume: Double? = nil, isCritical: Bool = true) {
            self.name = name
            self.volume = volume
            self.isCritical = isCritical
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.isCritical = (try container.decodeIfPresent(Int.self, forKey: .isCritical) ?? 0) != 0
            self.name = try container.decode(String.self, forKey: .name)
            self.volume = try container.decodeIfPresent(Double.self, forKey: .volume)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(isCritical ? 1 : 0, forKey: .isCritical)
            try container.encode(name, forKey: .name)
            try container.encodeIfPresent(volume, forKey: .volume)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let name = try? container.decode(String.self) {
            self = .named(name)
        } else {
            self = .critical(try container.decode(Critical.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .named(let name): try container.encode(name)
        case .critical(let critical): try container.encode(critical)
        }
    }
}

/// `aps.interruption-level`. An open set: unknown values are kept as text.
public struct APNSInterruptionLevel: Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let passive = APNSInterruptionLevel(rawValue: "passive")
    public static let active = APNSInterruptionLevel(rawValue: "active")
    public static let timeSensitive = APNSInterruptionLevel(rawValue: "time-sensitive")
    public static let critical = APNSInterruptionLevel(rawValue: "critical")

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}

/// `aps.event` of a Live Activity update. An open set: unknown values are kept as text.
public struct LiveActivityEvent: Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let start = LiveActivityEvent(rawValue: "start")
    public static let update = LiveActivityEvent(rawValue: "update")
    public static let end = LiveActivityEvent(rawValue: "end")

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
