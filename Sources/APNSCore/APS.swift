/// The `aps` dictionary with every key Apple documents, encoded with Apple's key names; nil keys are left out.
public struct APS: Sendable, Hashable, Codable {
    public var alert: APNSAlert?
    /// The number on the app icon; 0 removes it.
    public var badge: Int?
    public var sound: APNSSound?
    /// `thread-id`: groups notifications.
    public var threadID: String?
    /// The notification's actions.
    public var category: String?
    /// `content-available: 1`: wakes the app for a background update.
    public var contentAvailable: Bool
    /// `mutable-content: 1`: lets a notification service extension change the content.
    public var mutableContent: Bool
    /// `target-content-id`: the window to bring forward.
    public var targetContentID: String?
    public var interruptionLevel: APNSInterruptionLevel?
    /// 0 to 1 (any value for Live Activities): which notification the summary features.
    public var relevanceScore: Double?
    /// `filter-criteria`: matched against the device's Focus filters.
    public var filterCriteria: String?

    // MARK: Live Activities

    /// UNIX seconds of this update.
    public var timestamp: Int64?
    public var event: LiveActivityEvent?
    /// `content-state`: the activity's dynamic data, as the app's `ContentState` decodes it.
    public var contentState: [String: PayloadValue]?
    /// `stale-date`, UNIX seconds.
    public var staleDate: Int64?
    /// `dismissal-date`, UNIX seconds: when an ended activity leaves the Lock Screen.
    public var dismissalDate: Int64?
    /// `attributes-type`: the `ActivityAttributes` type a push-to-start creates.
    public var attributesType: String?
    /// The static attributes of a push-to-start activity.
    public var attributes: [String: PayloadValue]?

    enum CodingKeys: String, CodingKey {
        case alert, badge, sound, category, timestamp, event, attributes
        case threadID = "thread-id"
        case contentAvailable = "content-available"
        case mutableContent = "mutable-content"
        case targetContentID = "target-content-id"
        case interruptionLevel = "interruption-level"
        case relevanceScore = "relevance-score"
        case filterCriteria = "filter-criteria"
        case contentState = "content-state"
        case staleDate = "stale-date"
        case dismissalDate = "dismissal-date"
        case attributesType = "attributes-type"
    }

    public init(
        alert: APNSAlert? = nil,
        badge: Int? = nil,
        sound: APNSSound? = nil,
        threadID: String? = nil,
        category: String? = nil,
        contentAvailable: Bool = false,
        mutableContent: Bool = false,
        targetContentID: String? = nil,
        interruptionLevel: APNSInterruptionLevel? = nil,
        relevanceScore: Double? = nil,
        filterCriteria: String? = nil,
        timestamp: Int64? = nil,
        event: LiveActivityEvent? = nil,
        contentState: [String: PayloadValue]? = nil,
        staleDate: Int64? = nil,
        dismissalDate: Int64? = nil,
        attributesType: String? = nil,
        attributes: [String: PayloadValue]? = nil
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.targetContentID = targetContentID
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.timestamp = timestamp
        self.event = event
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.attributesType = attributesType
        self.attributes = attributes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        alert = try c.decodeIfPresent(APNSAlert.self, forKey: .alert)
        badge = try c.decodeIfPresent(Int.self, forKey: .badge)
        sound = try c.decodeIfPresent(APNSSound.self, forKey: .sound)
        threadID = try c.decodeIfPresent(String.self, forKey: .threadID)
        category = try c.decodeIfPresent(String.self, forKey: .category)
        contentAvailable = (try c.decodeIfPresent(Int.self, forKey: .contentAvailable) ?? 0) == 1
        mutableContent = (try c.decodeIfPresent(Int.self, forKey: .mutableContent) ?? 0) == 1
        targetContentID = try c.decodeIfPresent(String.self, forKey: .targetContentID)
        interruptionLevel = try c.decodeIfPresent(APNSInterruptionLevel.self, forKey: .interruptionLevel)
        relevanceScore = try c.decodeIfPresent(Double.self, forKey: .relevanceScore)
        filterCriteria = try c.decodeIfPresent(String.self, forKey: .filterCriteria)
        timestamp = try c.decodeIfPresent(Int64.self, forKey: .timestamp)
        event = try c.decodeIfPresent(LiveActivityEvent.self, forKey: .event)
        contentState = try c.decodeIfPresent([String: PayloadValue].self, forKey: .contentState)
        staleDate = try c.decodeIfPresent(Int64.self, forKey: .staleDate)
        dismissalDate = try c.decodeIfPresent(Int64.self, forKey: .dismissalDate)
        attributesType = try c.decodeIfPresent(String.self, forKey: .attributesType)
        attributes = try c.decodeIfPresent([String: PayloadValue].self, forKey: .attributes)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(alert, forKey: .alert)
        try c.encodeIfPresent(badge, forKey: .badge)
        try c.encodeIfPresent(sound, forKey: .sound)
        try c.encodeIfPresent(threadID, forKey: .threadID)
        try c.encodeIfPresent(category, forKey: .category)
        if contentAvailable { try c.encode(1, forKey: .contentAvailable) }
        if mutableContent { try c.encode(1, forKey: .mutableContent) }
        try c.encodeIfPresent(targetContentID, forKey: .targetContentID)
        try c.encodeIfPresent(interruptionLevel, forKey: .interruptionLevel)
        try c.encodeIfPresent(relevanceScore, forKey: .relevanceScore)
        try c.encodeIfPresent(filterCriteria, forKey: .filterCriteria)
        try c.encodeIfPresent(timestamp, forKey: .timestamp)
        try c.encodeIfPresent(event, forKey: .event)
        try c.encodeIfPresent(contentState, forKey: .contentState)
        try c.encodeIfPresent(staleDate, forKey: .staleDate)
        try c.encodeIfPresent(dismissalDate, forKey: .dismissalDate)
        try c.encodeIfPresent(attributesType, forKey: .attributesType)
        try c.encodeIfPresent(attributes, forKey: .attributes)
    }
}
