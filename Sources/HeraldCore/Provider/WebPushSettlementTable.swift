import WebPushCore

/// Web Push's table of answers (RFC 8030, WEBPUSH.md "The request"), keyed on the status, which every push service
/// means the same way; the service's own reason (Apple's `reason`, Mozilla's `errno`) is kept for the record.
///
/// - 2xx (201): accepted by the push service (not proof of a reader: a 201 is all a sender gets).
/// - 404, 410: the subscription is unknown, expired or unsubscribed: prune it.
/// - 413: the body is too large: that device fails (the job's payload is checked before sending, so this is rare).
/// - 429, 503 (and WNS's 406 with `Retry-After`), other 5xx: transient, after the `Retry-After` the service asked for.
/// - 401, 403: the VAPID key or subject is wrong for the service: the job stops and nothing is pruned.
/// - 400 and other 4xx: that notification fails and is never retried unchanged.
public struct WebPushSettlementTable: SettlementTable {
    public init() {}

    public var provider: String { "Web Push" }

    public func verdict(on answer: ProviderAnswer) -> Verdict {
        switch answer.status {
        case 200..<300: .delivered
        case 404, 410: .prune
        case 401, 403: .failJob
        case 429, 500..<600: .transient
        case 406 where answer.retryAfter != nil: .transient
        default: .failDevice
        }
    }
}

extension ProviderAnswer {
    /// A push service's answer in the provider-neutral terms: a reason named after the status (`Gone`, `NotFound`,
    /// `PayloadTooLarge`, `TooManyRequests`, …) followed by the service's own (Apple's `BadJwtToken`, Mozilla's
    /// errno), and `Retry-After` read by WebPushCore.
    public init(_ answer: WebPushAnswer) {
        var reason: ProviderReason? = nil
        if answer.kind != .accepted {
            let name = WebPushSettlementTable.name(of: answer.status)
            let text = answer.reason.map { "\(name): \($0)" } ?? name
            reason = ProviderReason(rawValue: text, provider: "Web Push")
        }
        self.init(status: answer.status, reason: reason, retryAfter: answer.retryAfter.map { .seconds($0) })
    }
}

extension WebPushSettlementTable {
    /// The reason recorded for a subscription found expired (its `expirationTime` passed) before sending.
    public static let expired = "SubscriptionExpired"
    /// The reason of a web device whose subscription keys are missing (a listed endpoint not registered).
    public static let notRegistered = "NotRegistered"

    /// A short name for a status, the start of every reason.
    static func name(of status: Int) -> String {
        switch status {
        case 400: "BadRequest"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "NotFound"
        case 406: "NotAcceptable"
        case 410: "Gone"
        case 413: "PayloadTooLarge"
        case 429: "TooManyRequests"
        case 500: "InternalServerError"
        case 502: "BadGateway"
        case 503: "ServiceUnavailable"
        default: "Status\(status)"
        }
    }
}
