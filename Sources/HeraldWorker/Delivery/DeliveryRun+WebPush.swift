import APNSCore
import HeraldCore
import HeraldStore
import WebPushCore

extension DeliveryRun {
    /// Sends a unit's web devices (browser subscriptions), each origin's share through its client: the payload
    /// written once per variant, encrypted per subscription as its request goes out.
    func sendWeb(
        _ devices: [StoredDevice], of job: PreparedJob, publishedAt: Int64, app: AppConfiguration,
        lease: TransportLease, badges: [String: Int], stop: StopFlag, pacing: inout Sender.Pacing?, probing: Bool
    ) async throws -> [DeviceResult] {
        let plan = Self.webPushPlan(
            for: devices, job: job, app: app, transports: lease.webpush, badges: badges,
            now: configuration.clock.unixSeconds)
        var results = plan.unsent
        for (transport, requests) in plan.shares {
            results += try await sender.send(
                Sender.Share(requests: requests, range: 0..<requests.count, stop: stop, publishedAt: publishedAt),
                through: transport, pacing: &pacing, probing: probing)
        }
        return results
    }

    /// What a unit's web devices come to: the requests for each push service origin, and the devices not sent to
    /// with why. A push type with no meaning in a browser, or an app without a `webpush` block, fails every device;
    /// a payload over Web Push's 3,993 bytes of plaintext stops the job; a subscription whose `expirationTime` has
    /// passed is pruned unsent (`SubscriptionExpired`); a device without its subscription's keys fails
    /// (`NotRegistered`).
    static func webPushPlan(
        for devices: [StoredDevice], job: PreparedJob, app: AppConfiguration, transports: WebPushTransports?,
        badges: [String: Int], now: Int64
    ) -> WebPushPlan {
        let template = job.template
        func all(_ disposition: Disposition) -> WebPushPlan {
            WebPushPlan(
                unsent: devices.map { DeviceResult(token: $0.token, disposition: disposition, retries: 0) },
                shares: [])
        }
        guard template.reachesWeb else { return all(.failDevice(reason: Self.webReason("NotForWeb"))) }
        guard let transports else { return all(.failDevice(reason: Self.webReason("NoWebPushCredentials"))) }
        let settings = transports.settings
        var unsent: [DeviceResult] = []
        var payloads: [[UInt8]] = []
        var indexOf: [String: Int] = [:]
        // Per origin: the devices' subscriptions, tokens and payload indices, in the unit's order.
        var byOrigin:
            [String: (
                transport: WebPushOriginTransport, subscriptions: [WebPushSubscription],
                tokens: [DeviceToken], variants: [Int]
            )] = [:]
        var origins: [String] = []
        let nowMillis = now * 1000
        // One payload for every device (the usual broadcast) needs no variant looked up per device.
        let uniform = template.localizations.isEmpty && badges.isEmpty
        for device in devices {
            guard let subscription = device.webSubscription else {
                unsent.append(
                    DeviceResult(
                        token: device.token,
                        disposition: .failDevice(reason: Self.webReason(WebPushSettlementTable.notRegistered)),
                        retries: 0))
                continue
            }
            if let expires = subscription.expirationTime, expires <= nowMillis {
                unsent.append(
                    DeviceResult(
                        token: device.token,
                        disposition: .prune(reason: Self.webReason(WebPushSettlementTable.expired), timestamp: nil),
                        retries: 0))
                continue
            }
            let variant = uniform ? nil : template.variant(for: device.locale)
            let badge = uniform ? nil : badges[device.token.hex]
            let key = uniform ? "" : "\(variant ?? "")|\(badge.map(String.init) ?? "")"
            let index: Int
            if let known = uniform ? (payloads.isEmpty ? nil : 0) : indexOf[key] {
                index = known
            } else {
                let notification = template.webPushNotification(
                    variant: variant, badge: badge, navigate: template.webPushNavigate ?? settings.navigate)
                let payload = notification.json(
                    declarative: template.webPushDeclarative ?? settings.declarative ?? false)
                guard payload.count <= WebPushEncryption.maximumPlaintextSize else {
                    return all(
                        .failJob(
                            reason: Self.webReason(
                                "PayloadTooLarge: the browser payload is \(payload.count) bytes; Web Push carries at"
                                    + " most \(WebPushEncryption.maximumPlaintextSize)")))
                }
                payloads.append(payload)
                index = payloads.count - 1
                indexOf[key] = index
            }
            let origin = subscription.endpoint.origin
            if byOrigin[origin] == nil {
                guard let transport = transports.transport(for: subscription.endpoint) else {
                    unsent.append(
                        DeviceResult(
                            token: device.token, disposition: .failDevice(reason: Self.webReason("TooManyOrigins")),
                            retries: 0))
                    continue
                }
                byOrigin[origin] = (transport, [], [], [])
                origins.append(origin)
            }
            byOrigin[origin]!.subscriptions.append(subscription)
            byOrigin[origin]!.tokens.append(device.token)
            byOrigin[origin]!.variants.append(index)
        }
        let ttl = template.webPushTTL(now: now)
        let shares = origins.map { origin in
            let entry = byOrigin[origin]!
            return (
                entry.transport,
                WebPushRequestList(
                    subscriptions: entry.subscriptions, tokens: entry.tokens, payloads: payloads,
                    variantOf: payloads.count == 1 ? nil : entry.variants, ttl: ttl, urgency: template.webPushUrgency,
                    topic: template.webPushTopic)
            )
        }
        return WebPushPlan(unsent: unsent, shares: shares)
    }

    static func webReason(_ text: String) -> ProviderReason { ProviderReason(rawValue: text, provider: "Web Push") }

    /// A unit's web devices: the requests per origin, and those not sent with why.
    struct WebPushPlan {
        var unsent: [DeviceResult]
        var shares: [(WebPushOriginTransport, WebPushRequestList)]
    }
}
