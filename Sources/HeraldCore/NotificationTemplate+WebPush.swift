import APNSCore
import WebPushCore

/// A job's notification as a browser gets it (docs/webpush.md): the neutral parts of the job written as the JSON a
/// service worker reads, or as Declarative Web Push, with the RFC 8030 headers.
extension NotificationTemplate {
    /// Whether the push type means anything in a browser: alerts and background (data-only) pushes do; Live
    /// Activities, VoIP, complications, widgets, controls, file provider, location, push-to-talk and MDM go to Apple
    /// devices only.
    public var reachesWeb: Bool { pushType == .alert || pushType == .background }

    /// The notification for a browser that gets `variant` (its locale's alert, nil for the default) and `badge`:
    ///
    /// - `aps.alert` (a string, or its `title` and `body`) → `title`, `body`; a background push has neither (the
    ///   service worker reads `data`);
    /// - `custom` → `data`, as written (JSON values keep their types);
    /// - `collapse_id` → `tag` (the browser replaces a shown notification with the same tag);
    /// - the badge (`aps.badge`, `badge_increment`) → `badge`; the variant's tag → `lang`;
    /// - `navigate`: the job's `notification.webpush.navigate`, else the app's.
    public func webPushNotification(variant: String?, badge: Int?, navigate: String?) -> WebPushNotification {
        var notification = WebPushNotification(tag: collapseID, navigate: navigate)
        if !custom.isEmpty { notification.data = try? PayloadValue.object(custom).jsonBytes() }
        guard pushType == .alert else { return notification }
        switch variant.flatMap({ localizations[$0] }) ?? aps["alert"] {
        case .string(let text):
            notification.body = text
        case .object(let alert):
            if case .string(let title)? = alert["title"] { notification.title = title }
            if case .string(let body)? = alert["body"] { notification.body = body }
        default:
            break
        }
        if variant != nil { notification.lang = variant }
        if let badge {
            notification.badge = badge
        } else if case .integer(let value)? = aps["badge"] {
            notification.badge = Int(clamping: value)
        }
        return notification
    }

    /// `Urgency`: an alert at priority 10 (or none) is `high`, at 5 `normal`, at 1 `low`; a background push is `low`
    /// (`very-low` at priority 1): it wakes nobody.
    public var webPushUrgency: WebPushUrgency {
        let level = priority?.rawValue ?? 10
        if pushType == .background { return level == 1 ? .veryLow : .low }
        switch level {
        case 10: return .high
        case 1: return .low
        default: return .normal
        }
    }

    /// `TTL` at `now` (seconds since 1970): the seconds left before `expiration` (0 for "now or never"), four weeks
    /// without one.
    public func webPushTTL(now: Int64) -> Int {
        guard let expiration else { return WebPushTTL.maximum }
        return expiration == 0 ? 0 : WebPushTTL.clamped(expiration - now)
    }

    /// `Topic`: the collapse id, or a digest of it when it is not a valid topic, so that a newer message replaces a
    /// pending one at the push service.
    public var webPushTopic: WebPushTopic? { collapseID.map(WebPushTopic.derived(from:)) }
}

extension NotificationTemplate {
    /// The fields of a job's `notification.webpush`.
    public static let webPushFieldNames = ["declarative", "navigate"]

    /// Reads a job's `notification.webpush` by the rules its schema states: `declarative` a boolean, `navigate` a
    /// URL by `WebPushNavigation`'s rule; null counts as absent; nothing else.
    mutating func readWebPush(_ block: [String: JSONValue]) throws(JobError) {
        for key in block.keys.sorted() where !Self.webPushFieldNames.contains(key) {
            throw JobError(
                .invalidNotification,
                "unknown field \(key.prefix(40)) in notification.webpush (known fields: declarative, navigate)")
        }
        switch block["declarative"] {
        case nil, .null?: break
        case .bool(let value)?: webPushDeclarative = value
        default: throw JobError(.invalidNotification, "notification.webpush.declarative must be true or false")
        }
        switch block["navigate"] {
        case nil, .null?: break
        case .string(let url)? where WebPushNavigation.isValid(url): webPushNavigate = url
        default:
            throw JobError(
                .invalidNotification,
                "notification.webpush.navigate must be an https URL (a host of letters, digits, dots and hyphens, an "
                    + "optional port, a path of printable ASCII), at most \(WebPushNavigation.maximumLength) bytes")
        }
    }
}
