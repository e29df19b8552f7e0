import APNSCore

/// One broadcast: a Live Activity update or end payload sent once to every device subscribed to a channel.
public struct BroadcastRequest: Sendable, Hashable {
    /// The channel (base64, as APNs gave it).
    public var channelID: String
    /// The JSON payload: an `aps` Live Activity update or end (broadcasts cannot start an activity).
    public var payload: [UInt8]
    /// `apns-priority`, 5 or 10; nil leaves it out (APNs then uses 10).
    public var priority: Priority?
    /// `apns-expiration` in seconds since 1970; 0 is one attempt, not stored. Channels with the no-storage policy
    /// take only 0. nil leaves it out.
    public var expiration: Int64?
    /// `apns-request-id`, a lowercase UUID that APNs echoes; nil lets APNs make one.
    public var requestID: String?

    /// The largest broadcast payload APNs accepts, in bytes.
    public static let maximumPayloadBytes = 5120

    public init(
        channelID: String, payload: [UInt8], priority: Priority? = nil, expiration: Int64? = nil,
        requestID: String? = nil
    ) {
        self.channelID = channelID
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
    }

    /// The first of Apple's broadcast rules this request breaks, as the reason APNs would answer and a sentence,
    /// or nil. With `policy`, the expiration rule of that storage policy is checked too. `broadcast(_:)` sends what
    /// it is given, so that a caller who wants APNs' own answer gets it; senders check here first.
    public func ruleViolation(policy: ChannelStoragePolicy? = nil) -> (reason: String, message: String)? {
        if channelID.isEmpty { return (ChannelReason.missingChannelId, "the broadcast names no channel") }
        if payload.isEmpty { return (ChannelReason.payloadEmpty, "the broadcast payload is empty") }
        if payload.count > Self.maximumPayloadBytes {
            return (
                ChannelReason.payloadTooLarge,
                "the broadcast payload is \(payload.count) bytes, over APNs' \(Self.maximumPayloadBytes)"
            )
        }
        if let priority, priority != .immediate, priority != .conservePower {
            return (ChannelReason.badPriority, "a broadcast's priority must be 5 or 10, not \(priority.rawValue)")
        }
        if policy == .noStorage, expiration != 0 {
            return (
                ChannelReason.badExpirationDate,
                "a channel that stores no message takes only apns-expiration 0"
            )
        }
        return nil
    }
}

/// APNs' answer to a broadcast: any status is a result, not an error.
public struct BroadcastResult: Sendable, Hashable {
    /// The HTTP status: 200 when APNs took the broadcast.
    public var status: Int
    /// APNs' `reason`, when it refused.
    public var reason: String?
    /// `apns-request-id` of the answer.
    public var requestID: String?

    public init(status: Int, reason: String? = nil, requestID: String? = nil) {
        self.status = status
        self.reason = reason
        self.requestID = requestID
    }

    /// Whether APNs took the broadcast.
    public var isSuccess: Bool { status == 200 }

    /// Whether the same broadcast may succeed later: 429 (too many requests, or too many provider token updates)
    /// and 5xx. Every other refusal needs a change to the request, the channel or the app's setup.
    public var isTransient: Bool { status == 429 || (500...599).contains(status) }
}

/// The reasons APNs gives on the channel management and broadcast endpoints (besides the provider token ones
/// every endpoint shares).
public enum ChannelReason {
    public static let featureNotEnabled = "FeatureNotEnabled"
    public static let missingChannelId = "MissingChannelId"
    public static let badChannelId = "BadChannelId"
    public static let channelNotRegistered = "ChannelNotRegistered"
    public static let cannotCreateChannelConfig = "CannotCreateChannelConfig"
    public static let badExpirationDate = "BadExpirationDate"
    public static let badPriority = "BadPriority"
    public static let topicMismatch = "TopicMismatch"
    public static let topicDisallowed = "TopicDisallowed"
    public static let payloadTooLarge = "PayloadTooLarge"
    public static let payloadEmpty = "PayloadEmpty"
    public static let missingPushType = "MissingPushType"
    public static let invalidPushType = "InvalidPushType"
    public static let badRequestParams = "BadRequestParams"
    public static let badRequestPayload = "BadRequestPayload"
    public static let expiredProviderToken = "ExpiredProviderToken"
    public static let invalidProviderToken = "InvalidProviderToken"
    public static let missingProviderToken = "MissingProviderToken"
    public static let tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
    public static let tooManyRequests = "TooManyRequests"

    /// What a reason means for the operator, in a few words; nil for one not known here.
    static func explanation(_ reason: String) -> String? {
        switch reason {
        case featureNotEnabled:
            "broadcast is not enabled for the bundle id (turn on the Broadcast capability of its App ID)"
        case missingChannelId: "the request named no channel"
        case badChannelId: "the channel id is malformed or too long"
        case channelNotRegistered: "APNs knows no such channel for this app in this environment"
        case cannotCreateChannelConfig: APNSChannelsError.quotaExplanation
        case badExpirationDate: "a channel that stores no message takes only apns-expiration 0"
        case badPriority: "the priority must be 5 or 10"
        case topicMismatch, topicDisallowed: "the topic does not match the bundle id the key may push to"
        case payloadTooLarge: "the payload is over \(BroadcastRequest.maximumPayloadBytes) bytes"
        case payloadEmpty: "the payload is empty"
        case missingPushType, invalidPushType: "the push type must be LiveActivity"
        case badRequestParams, badRequestPayload: "APNs could not read the request"
        case expiredProviderToken: "the provider token was too old"
        case invalidProviderToken, missingProviderToken:
            "the provider token was refused (check the key id, team id and key file)"
        case tooManyProviderTokenUpdates: "the provider token changed too often"
        case tooManyRequests: "APNs is throttling this app's requests"
        default: nil
        }
    }
}
