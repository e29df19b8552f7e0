import APNSCore
import Foundation
import HeraldCore

/// A typed notification for the producer: Apple's `aps` vocabulary (`APNSPayload`), the APNs headers and Herald's
/// per-locale variants and badge counters. Built fluently and validated before anything is published:
///
/// ```swift
/// let goal = PushNotification.alert(title: "Goal!", body: "2–1")
///     .sound(.default).threadID("match-42").collapseID("score").custom("match", 42)
/// ```
public struct PushNotification: Sendable, Hashable {
    public var payload: APNSPayload
    public var pushType: PushType
    public var priority: Priority?
    /// `apns-expiration`, UNIX seconds.
    public var expiration: Int64?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// Per-locale variants of the alert (BCP 47 tag → alert), chosen by each device's locale with fallback.
    public var localizations: [String: APNSAlert]
    /// Added to each device's stored badge counter; the result is sent as the badge.
    public var badgeIncrement: Int?

    public init(
        payload: APNSPayload,
        pushType: PushType = .alert,
        priority: Priority? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        localizations: [String: APNSAlert] = [:],
        badgeIncrement: Int? = nil
    ) {
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.localizations = localizations
        self.badgeIncrement = badgeIncrement
    }

    /// An alert with a title and body.
    public static func alert(title: String? = nil, subtitle: String? = nil, body: String) -> PushNotification {
        PushNotification(payload: APNSPayload(aps: APS(alert: .alert(title: title, subtitle: subtitle, body: body))))
    }

    /// A silent background update (`content-available`, priority 5).
    public static func background() -> PushNotification {
        PushNotification(
            payload: APNSPayload(aps: APS(contentAvailable: true)), pushType: .background, priority: .conservePower)
    }

    /// A Live Activity event.
    public static func liveActivity(
        _ event: LiveActivityEvent,
        contentState: [String: PayloadValue],
        timestamp: Date = HeraldClock.system.date
    ) -> PushNotification {
        PushNotification(
            payload: APNSPayload(
                aps: APS(timestamp: Int64(timestamp.timeIntervalSince1970), event: event, contentState: contentState)
            ),
            pushType: .liveactivity
        )
    }

    /// A copy changed by `modify`.
    public func with(_ modify: (inout PushNotification) -> Void) -> PushNotification {
        var copy = self
        modify(&copy)
        return copy
    }

    public func badge(_ value: Int) -> Self { with { $0.payload.aps.badge = value } }
    public func sound(_ value: APNSSound) -> Self { with { $0.payload.aps.sound = value } }
    public func threadID(_ value: String) -> Self { with { $0.payload.aps.threadID = value } }
    public func category(_ value: String) -> Self { with { $0.payload.aps.category = value } }
    public func mutableContent() -> Self { with { $0.payload.aps.mutableContent = true } }
    public func interruptionLevel(_ value: APNSInterruptionLevel) -> Self {
        with { $0.payload.aps.interruptionLevel = value }
    }
    public func relevanceScore(_ value: Double) -> Self { with { $0.payload.aps.relevanceScore = value } }
    public func custom(_ key: String, _ value: PayloadValue) -> Self { with { $0.payload.custom[key] = value } }
    public func pushType(_ value: PushType) -> Self { with { $0.pushType = value } }
    public func priority(_ value: Priority) -> Self { with { $0.priority = value } }
    public func expiration(_ date: Date) -> Self { with { $0.expiration = Int64(date.timeIntervalSince1970) } }
    public func collapseID(_ value: String) -> Self { with { $0.collapseID = value } }
    public func localized(_ locale: String, _ alert: APNSAlert) -> Self { with { $0.localizations[locale] = alert } }
    public func incrementBadge(by value: Int = 1) -> Self { with { $0.badgeIncrement = value } }

    /// Validates the payload against Apple's rules for its push type and returns the job's notification.
    public func jobNotification() throws(ProducerError) -> JobNotification {
        do {
            try payload.validate(for: pushType)
            for (_, alert) in localizations {
                var variant = payload
                variant.aps.alert = alert
                try variant.validate(for: pushType)
            }
        } catch {
            throw ProducerError(.invalidPayload, error.message, underlying: error)
        }
        do {
            let encoder = JSONEncoder()
            let decoder = JSONDecoder()
            let aps = try decoder.decode([String: JSONValue].self, from: encoder.encode(payload.aps))
            let custom = try decoder.decode([String: JSONValue].self, from: encoder.encode(payload.custom))
            let localized = try decoder.decode([String: JSONValue].self, from: encoder.encode(localizations))
            return JobNotification(
                pushType: pushType == .alert ? nil : pushType.rawValue,
                priority: priority?.rawValue,
                expiration: expiration,
                collapseID: collapseID,
                aps: aps,
                custom: custom.isEmpty ? nil : custom,
                localizations: localized.isEmpty ? nil : localized,
                badgeIncrement: badgeIncrement
            )
        } catch {
            throw ProducerError(.invalidPayload, "the payload cannot be encoded as JSON", underlying: error)
        }
    }
}
