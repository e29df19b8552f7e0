import APNSCore
import FCMCore

/// A job's notification as an Android device gets it: the neutral parts of the job (the alert's title and body and
/// their localisations, custom data, collapse id, expiration, priority, badge) written as the FCM message a careful
/// engineer would write (docs/fcm.md).
extension NotificationTemplate {
    /// Whether the push type means anything on Android: alerts and background (data-only) pushes do; Live
    /// Activities, VoIP, complications, widgets, controls, file provider, location, push-to-talk and MDM go to Apple
    /// devices only.
    public var reachesAndroid: Bool { pushType == .alert || pushType == .background }

    /// The FCM message for a device that gets `variant` (its locale's alert, nil for the default) and `badge`,
    /// sent at `now` (seconds since 1970) for an app whose default notification channel is `channelID`.
    ///
    /// - `aps.alert` (a string, or `title`/`body`, `title-loc-key`/`loc-key` and their arguments) becomes the
    ///   notification; a background push is data only.
    /// - custom keys become `data`, every value a string (strings as they are, anything else its JSON text).
    /// - `collapse_id` → `android.collapse_key`; `expiration` → `android.ttl` (the seconds left, 0 for "now or
    ///   never", at most 28 days); priority 10 (or none) → HIGH, 5 and 1 → NORMAL.
    /// - the badge → `android.notification.notification_count`; `aps.sound` → `android.notification.sound`.
    public func fcmMessage(
        variant: String?, badge: Int?, now: Int64, channelID: String?, overrides: FCMMessageOverrides?
    ) -> FCMMessage {
        var message = fcmContent(variant: variant, badge: badge, overrides: overrides)
        message.android = fcmAndroid(message.android, now: now, channelID: channelID)
        return message
    }

    /// The template of the message every device without a variant or a badge gets (`fcmMessage(variant: nil,
    /// badge: nil, …)`).
    public func fcmTemplate(now: Int64, channelID: String?) throws(FCMMessageError) -> FCMMessageTemplate {
        try fcmMessage(variant: nil, badge: nil, now: now, channelID: channelID, overrides: fcmOverrides)
            .template(checked: false)
    }

    /// The parts written ahead (`fcmParts`) with the TTL of a send at `now`, their payload size checked: each
    /// device's body is written whole from them (`FCMMessageParts.body(for:ttl:channelID:)`), the same bytes as
    /// `fcmTemplate(now:channelID:)`'s. Nil when no parts were written ahead (or an `fcm` block was set since).
    public func fcmPartsToSend(now: Int64) throws(FCMMessageError) -> (parts: FCMMessageParts, ttl: Int64?)? {
        guard let fcmParts, fcmOverrides == nil else { return nil }
        try fcmParts.checkPayloadSize()
        return (fcmParts, fcmTTL(now: now))
    }

    /// Writes `fcmParts`, when the message can be written ahead: no `fcm` block to merge, a push type that reaches
    /// Android, one message for every device (no localizations, no badge counter). Written from the neutral fields
    /// straight into bytes, without the `FCMMessage` the general path builds (the same bytes, tested).
    mutating func writeFCMParts() {
        guard reachesAndroid, fcmOverrides == nil, !variesPerDevice else { return }
        var fields = fcmFields(variant: nil, badge: nil)
        fcmParts = FCMMessageParts(
            collapseKey: collapseID, priority: fcmPriority, androidNotification: fields.androidNotification,
            notification: fields.notification, data: &fields.data)
    }

    /// The message without what depends on the send: `android.ttl` and the notification channel.
    private func fcmContent(variant: String?, badge: Int?, overrides: FCMMessageOverrides?) -> FCMMessage {
        let fields = fcmFields(variant: variant, badge: badge)
        var data = [String: String](minimumCapacity: fields.data.count)
        for (key, value) in fields.data { data[key] = value }
        return FCMMessage(
            notification: fields.notification, data: FCMData(data),
            android: FCMAndroidConfig(
                collapseKey: collapseID, priority: fcmPriority, notification: fields.androidNotification),
            overrides: overrides)
    }

    /// Priority 10 (or none) → HIGH, 5 and 1 → NORMAL.
    private var fcmPriority: FCMAndroidConfig.Priority {
        priority == nil || priority == .immediate ? .high : .normal
    }

    /// The neutral parts as FCM's fields: the shown notification and the Android one (an alert's; a background
    /// push is data only), and the custom data with every value a string.
    private func fcmFields(variant: String?, badge: Int?) -> (
        notification: FCMNotification?, androidNotification: FCMAndroidNotification?,
        data: [(key: String, value: String)]
    ) {
        var data: [(key: String, value: String)] = []
        data.reserveCapacity(custom.count)
        for (key, value) in custom {
            switch value {
            case .string(let text): data.append((key, text))
            // The compact JSON text of the common scalars, without encoding them.
            case .integer(let number): data.append((key, String(number)))
            case .bool(let flag): data.append((key, flag ? "true" : "false"))
            case .null: data.append((key, "null"))
            default: data.append((key, (try? value.jsonBytes()).map { String(decoding: $0, as: UTF8.self) } ?? ""))
            }
        }
        guard pushType == .alert else { return (nil, nil, data) }
        var notification = FCMAndroidNotification()
        var title: String? = nil
        var body: String? = nil
        switch variant.flatMap({ localizations[$0] }) ?? aps["alert"] {
        case .string(let text):
            body = text
        case .object(let alert):
            // One pass over the alert's few keys rather than a lookup for each field read.
            for (key, value) in alert {
                switch key {
                case "title": title = value.stringValue
                case "body": body = value.stringValue
                case "title-loc-key": notification.titleLocKey = value.stringValue
                case "title-loc-args": notification.titleLocArgs = value.stringArray
                case "loc-key": notification.bodyLocKey = value.stringValue
                case "loc-args": notification.bodyLocArgs = value.stringArray
                default: break
                }
            }
        default:
            break
        }
        if let badge = badge ?? aps["badge"]?.integerValue.map(Int.init) { notification.notificationCount = badge }
        if let sound = aps["sound"]?.stringValue { notification.sound = sound }
        let shown = title != nil || body != nil ? FCMNotification(title: title, body: body) : nil
        return (shown, notification, data)
    }

    /// `android.ttl` at `now`: the seconds left to the job's expiration (0 for "now or never", at most 28 days).
    private func fcmTTL(now: Int64) -> Int64? {
        expiration.map { $0 == 0 ? 0 : min(max($0 - now, 0), FCMAndroidConfig.maximumTTL) }
    }

    /// `android` as sent at `now` by an app whose default channel is `channelID`: the seconds left to the job's
    /// expiration as its TTL, the channel on its notification (a background push has none).
    private func fcmAndroid(_ android: FCMAndroidConfig?, now: Int64, channelID: String?) -> FCMAndroidConfig? {
        guard var android else { return nil }
        android.ttl = fcmTTL(now: now)
        android.notification?.channelID = channelID
        return android
    }
}

extension PayloadValue {
    fileprivate var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    fileprivate var stringArray: [String]? {
        guard case .array(let values) = self else { return nil }
        return values.compactMap(\.stringValue)
    }
}

extension PreparedJob {
    /// Writes the job's FCM message ahead of its send, for a job that lists an Android device: while the job's
    /// fields are in the caches of the one that just read it, rather than at the send, which finds them cold. The
    /// worker does it for the small jobs it groups (one message each, sent within moments); a job that is planned,
    /// or only validated (the API, the producer, `herald publish`), is not worth it.
    public mutating func writeFCMParts() {
        guard listsAndroid else { return }
        template.writeFCMParts()
    }
}
