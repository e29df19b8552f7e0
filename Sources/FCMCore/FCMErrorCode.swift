/// The `errorCode` of an `FcmError` detail: what FCM says went wrong. Key handling on this, not on message text.
public enum FCMErrorCode: Sendable, Hashable, CustomStringConvertible {
    /// No more information.
    case unspecifiedError
    /// A bad field, a message too big, a reserved key, a bad TTL, or a bad token (400).
    case invalidArgument
    /// The token is dead: uninstalled, expired, rotated or unregistered (404).
    case unregistered
    /// The token belongs to another Firebase project (403).
    case senderIDMismatch
    /// The project's, device's or topic's rate was exceeded (429).
    case quotaExceeded
    /// Overloaded or timed out (503).
    case unavailable
    /// An unknown server error (500).
    case `internal`
    /// The project's APNs certificate or key, or its web-push key, is invalid or missing (401).
    case thirdPartyAuthError
    /// A code this version does not know, as sent.
    case unknown(String)

    /// Every documented code, with the HTTP status FCM gives it.
    public static let documented: [(status: Int, code: FCMErrorCode)] = [
        (400, .unspecifiedError), (400, .invalidArgument), (404, .unregistered), (403, .senderIDMismatch),
        (429, .quotaExceeded), (503, .unavailable), (500, .internal), (401, .thirdPartyAuthError),
    ]

    /// The code for FCM's text; an unknown text is kept as `.unknown`.
    public init(rawValue: String) {
        switch rawValue {
        case "UNSPECIFIED_ERROR": self = .unspecifiedError
        case "INVALID_ARGUMENT": self = .invalidArgument
        case "UNREGISTERED": self = .unregistered
        case "SENDER_ID_MISMATCH": self = .senderIDMismatch
        case "QUOTA_EXCEEDED": self = .quotaExceeded
        case "UNAVAILABLE": self = .unavailable
        case "INTERNAL": self = .internal
        case "THIRD_PARTY_AUTH_ERROR": self = .thirdPartyAuthError
        default: self = .unknown(rawValue)
        }
    }

    /// The code as FCM writes it.
    public var rawValue: String {
        switch self {
        case .unspecifiedError: "UNSPECIFIED_ERROR"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .unregistered: "UNREGISTERED"
        case .senderIDMismatch: "SENDER_ID_MISMATCH"
        case .quotaExceeded: "QUOTA_EXCEEDED"
        case .unavailable: "UNAVAILABLE"
        case .internal: "INTERNAL"
        case .thirdPartyAuthError: "THIRD_PARTY_AUTH_ERROR"
        case .unknown(let text): text
        }
    }

    /// Whether the code is one FCM documents.
    public var isKnown: Bool {
        if case .unknown = self { return false }
        return true
    }

    public var description: String { rawValue }
}
