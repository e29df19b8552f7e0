import APNSCore
import FCMCore
import Foundation
import WebPushCore

/// Everything of an APNs request except the device token.
public struct NotificationTemplate: Sendable, Hashable {
    public var pushType: PushType
    public var priority: Priority?
    public var expiration: Int64?
    public var collapseID: String?
    /// The payload for a device with no matching localization and no badge counter.
    public var payload: [UInt8]
    /// The `aps` dictionary and custom keys, for payloads that differ per device.
    public var aps: [String: JSONValue] = [:]
    public var custom: [String: JSONValue] = [:]
    /// Localized `aps.alert` variants keyed by normalised BCP 47 tag.
    public var localizations: [String: JSONValue] = [:]
    /// Added to each device's badge counter, if set.
    public var badgeIncrement: Int? = nil
    /// The job's `fcm` block, validated: merged over each Android device's message.
    public var fcmOverrides: FCMMessageOverrides? = nil
    /// The job's `webpush.declarative`, if set: whether browsers get the Declarative Web Push form.
    public var webPushDeclarative: Bool? = nil
    /// The job's `webpush.navigate`, if set: the URL a browser notification opens.
    public var webPushNavigate: String? = nil
    /// The default FCM message written ahead of the send (`PreparedJob.writeFCMParts()`), for a small job that lists
    /// an Android device (nil otherwise: the message is written at the send).
    public internal(set) var fcmParts: FCMMessageParts? = nil

    public init(
        pushType: PushType,
        priority: Priority?,
        expiration: Int64?,
        collapseID: String?,
        payload: [UInt8]
    ) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
    }

    /// Whether devices may get different payloads (localizations or badge counters).
    public var variesPerDevice: Bool { !localizations.isEmpty || badgeIncrement != nil }

    /// The localization key that serves `locale`, nil for the default alert.
    public func variant(for locale: String?) -> String? {
        Localization.bestMatch(for: locale, in: Set(localizations.keys))
    }

    /// The payload for one device: its localized alert (by fallback) and its absolute badge, if any.
    public func payload(variant: String?, badge: Int?) -> [UInt8] {
        guard variant != nil || badge != nil else { return payload }
        var aps = self.aps
        if let variant, let alert = localizations[variant] { aps["alert"] = alert }
        if let badge { aps["badge"] = .integer(Int64(badge)) }
        return (try? Self.encode(aps: aps, custom: custom)) ?? payload
    }

    static func encode(aps: [String: JSONValue], custom: [String: JSONValue]) throws -> [UInt8] {
        var body = custom
        body["aps"] = .object(aps)
        return try PayloadValue.object(body).jsonBytes()
    }

    /// The request for one device of the app `bundleID`.
    public func request(to token: DeviceToken, bundleID: String, payload: [UInt8]? = nil) -> APNSRequest {
        request(to: token, topic: pushType.topic(forBundleID: bundleID), payload: payload)
    }

    /// The request for one device, to `topic` as `pushType.topic(forBundleID:)` gave it (made once per batch).
    public func request(to token: DeviceToken, topic: String, payload: [UInt8]? = nil) -> APNSRequest {
        APNSRequest(
            deviceToken: token,
            topic: topic,
            pushType: pushType,
            priority: priority,
            expiration: expiration,
            collapseID: collapseID,
            payload: payload ?? self.payload
        )
    }
}

extension NotificationTemplate {
    /// Builds the template from a job's notification, encoding the payload once and checking Apple's rules.
    ///
    /// - Parameter maximumPayloadSize: a larger limit than the push type's (a broadcast's 5,120 bytes).
    public init(_ notification: JobNotification, maximumPayloadSize: Int? = nil) throws(JobError) {
        let pushType = PushType(rawValue: notification.pushType ?? "alert")
        guard pushType.isKnown else {
            throw JobError(
                .invalidNotification, "push_type \"\(pushType.rawValue.prefix(40))\" is not an APNs push type")
        }
        if let custom = notification.custom, custom["aps"] != nil {
            throw JobError(.invalidNotification, "custom must not contain the key aps")
        }
        let payload: [UInt8]
        do {
            payload = try Self.encode(aps: notification.aps, custom: notification.custom ?? [:])
        } catch {
            throw JobError(.invalidNotification, "the notification cannot be encoded as JSON")
        }
        self.init(
            pushType: pushType,
            // Apple requires 5 for background pushes; APNs' default is 10.
            priority: notification.priority.map(Priority.init(rawValue:))
                ?? (pushType == .background ? .conservePower : nil),
            expiration: notification.expiration,
            collapseID: notification.collapseID,
            payload: payload
        )
        aps = notification.aps
        custom = notification.custom ?? [:]
        badgeIncrement = notification.badgeIncrement
        // Sorted, so that of two keys that differ only in case or separator ("fr-CA", "fr_ca") the same one wins
        // every time (NotificationRules checked each is a tag).
        for (tag, alert) in (notification.localizations ?? [:]).sorted(by: { $0.key < $1.key }) {
            localizations[Localization.normalize(tag)] = alert
        }
        // Apple's rules are checked on a request with a placeholder token: only the token check depends on it.
        // Every variant is checked at its largest (the largest badge the counter holds), so no device's payload is over the limit.
        let largestBadge: Int? = badgeIncrement == nil ? nil : Int(JobLimits.integerColumn.upperBound)
        do {
            try request(to: DeviceToken(trustedHex: "00"), bundleID: "app").validate(
                maximumPayloadSize: maximumPayloadSize)
            for variant in [nil] + localizations.keys.sorted().map(Optional.some) {
                var probe = self
                probe.payload = self.payload(variant: variant, badge: largestBadge)
                try probe.request(to: DeviceToken(trustedHex: "00"), bundleID: "app").validate(
                    maximumPayloadSize: maximumPayloadSize)
            }
        } catch {
            throw JobError(.invalidNotification, error.message)
        }
        try NotificationRules.check(notification, pushType: pushType)
        if let block = notification.webpush {
            try readWebPush(block)
        }
        if let block = notification.fcm {
            do {
                let overrides = try FCMMessageOverrides(jobBlock: try PayloadValue.object(block).jsonBytes())
                fcmOverrides = overrides.isEmpty ? nil : overrides
            } catch let error as FCMMessageError {
                throw JobError(.invalidNotification, "notification.\(error.description)")
            } catch {
                throw JobError(.invalidNotification, "notification.fcm cannot be encoded as JSON")
            }
        }
    }
}
