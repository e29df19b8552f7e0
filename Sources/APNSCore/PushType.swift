/// The `apns-push-type` of a notification: which topic suffix it needs, which priorities it allows and how large
/// its payload may be.
///
/// An open set: Apple adds push types, so unknown values are kept as text rather than rejected.
public struct PushType: Sendable, Hashable, CustomStringConvertible {
    /// The header value, e.g. `alert`.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let alert = PushType(rawValue: "alert")
    public static let background = PushType(rawValue: "background")
    public static let complication = PushType(rawValue: "complication")
    public static let controls = PushType(rawValue: "controls")
    public static let fileprovider = PushType(rawValue: "fileprovider")
    public static let liveactivity = PushType(rawValue: "liveactivity")
    public static let location = PushType(rawValue: "location")
    public static let mdm = PushType(rawValue: "mdm")
    public static let pushtotalk = PushType(rawValue: "pushtotalk")
    public static let voip = PushType(rawValue: "voip")
    public static let widgets = PushType(rawValue: "widgets")

    /// Every push type Apple documents.
    public static let known: [PushType] = [
        .alert, .background, .complication, .controls, .fileprovider, .liveactivity, .location, .mdm, .pushtotalk,
        .voip, .widgets,
    ]

    /// Whether Apple documents this push type.
    public var isKnown: Bool { Self.known.contains(self) }

    /// The suffix appended to the bundle id to form `apns-topic` (empty for `alert` and `background`).
    public var topicSuffix: String {
        switch rawValue {
        case "complication": ".complication"
        case "controls": ".push-type.controls"
        case "fileprovider": ".pushkit.fileprovider"
        case "liveactivity": ".push-type.liveactivity"
        case "location": ".location-query"
        case "pushtotalk": ".voip-ptt"
        case "voip": ".voip"
        case "widgets": ".push-type.widgets"
        default: ""
        }
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The topic to send to for an app whose bundle id is `bundleID`.
    ///
    /// `mdm` topics come from the MDM certificate and are used unchanged.
    public func topic(forBundleID bundleID: String) -> String {
        let suffix = topicSuffix
        if suffix.isEmpty || bundleID.hasSuffix(suffix) { return bundleID }
        return bundleID + suffix
    }

    public var description: String { rawValue }
}
