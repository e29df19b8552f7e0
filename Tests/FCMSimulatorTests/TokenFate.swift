import Testing

/// The token fates a configuration can give, with FCM's answer to each.
enum TokenFate: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case dead
    case deadByPrefix
    case foreign
    case thirdPartyAuthError

    var testDescription: String { rawValue }

    var token: String {
        switch self {
        case .dead: "exactly-dead-token-0123456789"
        case .deadByPrefix: "deadprefix-0123456789abcdef"
        case .foreign: "foreign-0123456789abcdef"
        case .thirdPartyAuthError: "apnsbroken-0123456789abcdef"
        }
    }

    var status: Int {
        switch self {
        case .dead, .deadByPrefix: 404
        case .foreign: 403
        case .thirdPartyAuthError: 401
        }
    }

    var errorCode: String {
        switch self {
        case .dead, .deadByPrefix: "UNREGISTERED"
        case .foreign: "SENDER_ID_MISMATCH"
        case .thirdPartyAuthError: "THIRD_PARTY_AUTH_ERROR"
        }
    }

    var body: String {
        let (message, status): (String, String)
        switch self {
        case .dead, .deadByPrefix: (message, status) = ("Requested entity was not found.", "NOT_FOUND")
        case .foreign: (message, status) = ("SenderId mismatch", "PERMISSION_DENIED")
        case .thirdPartyAuthError: (message, status) = ("Auth error from APNS or Web Push Service", "UNAUTHENTICATED")
        }
        return #"{"error":{"code":\#(self.status),"message":"\#(message)","status":"\#(status)","details":["#
            + #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}]}}"#
    }
}
