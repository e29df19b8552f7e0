import APNSCore

/// APNs' table of answers: every status and reason APNs documents (APNS.md); an unknown reason falls back on its
/// status class.
public struct APNSSettlementTable: SettlementTable {
    public init() {}

    public var provider: String { "APNs" }

    public func verdict(on answer: ProviderAnswer) -> Verdict {
        // APNs takes a notification with 200 only; another 2xx is not one it documents.
        if answer.status == 200 { return .delivered }
        switch APNSReason(rawValue: reason(of: answer).rawValue) {
        // Dead or foreign tokens: prune (410 subject to its timestamp).
        case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic:
            return .prune
        // Transient: the server or the connection, not the notification.
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout,
            .expiredProviderToken, .tooManyProviderTokenUpdates, .unrelatedKeyIdInToken:
            return .transient
        // Job-level: the topic, the credentials or the payload are wrong for every device.
        case .badTopic, .topicDisallowed, .missingTopic, .payloadTooLarge, .payloadEmpty, .badCollapseId,
            .badExpirationDate, .badMessageId, .badPriority, .invalidPushType, .duplicateHeaders, .missingDeviceToken,
            .badCertificate, .badCertificateEnvironment, .forbidden, .invalidProviderToken, .missingProviderToken,
            .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .badPath, .methodNotAllowed:
            return .failJob
        default:
            switch answer.status {
            case 410: return .prune
            case 429, 500..<600: return .transient
            case 403, 404, 405, 413: return .failJob
            default: return .failDevice
            }
        }
    }
}

extension ProviderReason {
    /// An APNs reason; a token APNs says is malformed or of another topic counts against the app.
    public init(_ apns: APNSReason) {
        self.init(
            rawValue: apns.rawValue, countsAgainstApp: apns == .badDeviceToken || apns == .deviceTokenNotForTopic)
    }
}

extension ProviderAnswer {
    /// APNs' answer in the provider-neutral terms (APNs sends no `Retry-After`; its timestamp means something
    /// only on a 410).
    public init(_ outcome: APNSOutcome) {
        self.init(
            status: outcome.status, reason: outcome.reason.map(ProviderReason.init),
            invalidSince: outcome.status == 410 ? outcome.timestamp : nil)
    }
}
