import APNSCore
import FCMCore
import HeraldCore
import HeraldStore

extension DeliveryRun {
    /// The FCM requests of `devices` (Android), or why none is sent: a push type with no meaning on Android (they
    /// go to Apple devices only), an app without FCM credentials, or a message FCM would refuse for every device
    /// (too large, a bad `fcm` block): the job's fault, so the job stops with it.
    static func fcmRequests(
        for devices: [StoredDevice], job: PreparedJob, app: AppConfiguration,
        transport: (any NotificationTransport<[UInt8]>)?, badges: [String: Int], now: Int64
    ) -> FCMShare {
        fcmRequests(
            for: devices, template: job.template, app: app, transport: transport, badges: badges, now: now)
    }

    /// The template is borrowed, not copied: a copy of it retained each of its fields (its dictionaries, payload,
    /// parts), per job of a single device.
    private static func fcmRequests(
        for devices: [StoredDevice], template: borrowing NotificationTemplate, app: AppConfiguration,
        transport: (any NotificationTransport<[UInt8]>)?, badges: [String: Int], now: Int64
    ) -> FCMShare {
        guard template.reachesAndroid else {
            return .unsent(.failDevice(reason: ProviderReason(rawValue: "NotForAndroid", provider: "FCM")))
        }
        guard let transport else {
            return .unsent(.failDevice(reason: ProviderReason(rawValue: "NoFCMCredentials", provider: "FCM")))
        }
        let tokens = devices.map(\.token)
        let kinds = devices.map { $0.fcmKind ?? .token }
        let channelID = app.fcm?.channelID
        if template.localizations.isEmpty && badges.isEmpty {
            // One message for every device: from the parts written at intake (a small job's), each device's body
            // written whole; otherwise built once as a template, no variant looked up per device.
            do {
                let messages: FCMRequestList.Messages
                if let (parts, ttl) = try template.fcmPartsToSend(now: now) {
                    messages = .parts(parts, ttl: ttl, channelID: channelID)
                } else {
                    messages = .templates([try template.fcmTemplate(now: now, channelID: channelID)], variantOf: nil)
                }
                return .send(FCMRequestList(tokens: tokens, kinds: kinds, messages: messages), transport)
            } catch {
                return .unsent(
                    .failJob(reason: ProviderReason(rawValue: "InvalidFCMMessage: \(error)", provider: "FCM")))
            }
        }
        var templates: [FCMMessageTemplate] = []
        var indexOf: [String: Int] = [:]
        var variantOf: [Int] = []
        variantOf.reserveCapacity(devices.count)
        for device in devices {
            let variant = template.localizations.isEmpty ? nil : template.variant(for: device.locale)
            let badge = badges[device.token.hex]
            let key = "\(variant ?? "")|\(badge.map(String.init) ?? "")"
            if let index = indexOf[key] {
                variantOf.append(index)
                continue
            }
            let message = template.fcmMessage(
                variant: variant, badge: badge, now: now, channelID: channelID,
                overrides: template.fcmOverrides)
            do {
                // Built by `fcmMessage`, whose values are in range by construction.
                templates.append(try message.template(checked: false))
            } catch {
                return .unsent(
                    .failJob(reason: ProviderReason(rawValue: "InvalidFCMMessage: \(error)", provider: "FCM")))
            }
            indexOf[key] = templates.count - 1
            variantOf.append(templates.count - 1)
        }
        let requests = FCMRequestList(
            tokens: tokens, kinds: kinds,
            messages: .templates(templates, variantOf: templates.count == 1 ? nil : variantOf))
        return .send(requests, transport)
    }

    /// A unit's Android devices: their requests and FCM's transport, or what they come to unsent.
    enum FCMShare {
        case send(FCMRequestList, any NotificationTransport<[UInt8]>)
        case unsent(Disposition)
    }
}
