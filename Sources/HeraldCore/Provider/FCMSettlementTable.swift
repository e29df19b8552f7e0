import FCMCore

/// FCM's table of answers (FCM.md, "Answers and what a provider must do"), keyed on the FcmError code, never on the
/// message text; an answer without a code falls back on its status.
///
/// - 200: delivered.
/// - `UNREGISTERED` (404): the token is dead: prune.
/// - `INVALID_ARGUMENT` (400): prune only when it names the token (`InvalidRegistration`); a bad payload fails the
///   notification with the reason and keeps the device.
/// - `SENDER_ID_MISMATCH` (403): the token is another project's: prune, counted against the app by the prune
///   breaker (a tenant mix-up shows as many of them).
/// - `QUOTA_EXCEEDED` (429), `UNAVAILABLE` (503), `INTERNAL` (500), and any 429 or 5xx: transient, after the
///   `Retry-After` FCM asked for.
/// - `THIRD_PARTY_AUTH_ERROR` (401), a 401 that a new access token did not cure, `PERMISSION_DENIED` (403) and a
///   404 that is not `UNREGISTERED` (no such project): the job's credentials or project are wrong for every device:
///   the job stops and nothing is pruned.
/// - Anything else: that notification fails; a 400, 403 or 404 is never retried.
public struct FCMSettlementTable: SettlementTable {
    public init() {}

    public var provider: String { "FCM" }

    /// The reason recorded for an `INVALID_ARGUMENT` that names the device's token.
    public static let invalidRegistration = "InvalidRegistration"

    public func verdict(on answer: ProviderAnswer) -> Verdict {
        if answer.status == 200 { return .delivered }
        switch answer.reason?.rawValue {
        case "UNREGISTERED", Self.invalidRegistration, "SENDER_ID_MISMATCH":
            return .prune
        case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL":
            return .transient
        case "THIRD_PARTY_AUTH_ERROR", "UNAUTHENTICATED", "PERMISSION_DENIED":
            return .failJob
        default:
            switch answer.status {
            case 429, 500..<600: return .transient
            case 401, 403, 404: return .failJob
            default: return .failDevice
            }
        }
    }
}

extension ProviderAnswer {
    /// FCM's answer in the provider-neutral terms: its code (or, without one, its google.rpc status) as the reason,
    /// an `INVALID_ARGUMENT` that names the token as `InvalidRegistration`, and `Retry-After` read against `now`
    /// (seconds since 1970).
    public init(_ answer: FCMAnswer, retryAfter: String?, now: Int64) {
        var reason: ProviderReason? = nil
        if !answer.isSuccess {
            if answer.errorCode == .invalidArgument && answer.namesTheToken {
                reason = ProviderReason(rawValue: FCMSettlementTable.invalidRegistration, provider: "FCM")
            } else if let code = answer.errorCode {
                reason = ProviderReason(
                    rawValue: code.rawValue, countsAgainstApp: code == .senderIDMismatch, provider: "FCM")
            } else if let status = answer.rpcStatus {
                reason = ProviderReason(rawValue: status, provider: "FCM")
            }
        }
        self.init(
            status: answer.status, reason: reason,
            retryAfter: retryAfter.flatMap { FCMRetryAfter.seconds($0, now: now) }.map { .seconds($0) })
    }
}
