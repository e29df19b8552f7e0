import APNSCore
import Foundation

/// The stateless checks of Apple's broadcast endpoints: channel management (`/1/apps/<bundle>/channels`,
/// `/1/apps/<bundle>/all-channels`) and broadcast sends (`/4/broadcasts/apps/<bundle>`). Pure: header pairs and
/// bytes in, a value or a ``Rejection`` out.
///
/// Reasons Apple documents only by name (its "Handling error responses from APNs" table) are answered with status
/// 400 unless a rule below says otherwise; ``APNSReason`` in APNSCore does not list them yet, so they are spelled
/// here.
enum BroadcastValidation {
    /// Which endpoint a `:path` names.
    enum Route: Sendable, Hashable {
        /// `/1/apps/<bundle>/channels`: POST creates, GET reads, DELETE deletes (the id in `apns-channel-id`).
        case channels(bundleID: String)
        /// `/1/apps/<bundle>/all-channels`: GET lists.
        case allChannels(bundleID: String)
        /// `/4/broadcasts/apps/<bundle>`: POST sends.
        case broadcast(bundleID: String)
        /// Under `/1/` or `/4/` but none of the above.
        case badPath

        var bundleID: String? {
            switch self {
            case .channels(let bundleID), .allChannels(let bundleID), .broadcast(let bundleID): bundleID
            case .badPath: nil
            }
        }

        /// The methods the endpoint serves.
        var methods: Set<String> {
            switch self {
            case .channels: ["POST", "GET", "DELETE"]
            case .allChannels: ["GET"]
            case .broadcast: ["POST"]
            case .badPath: []
            }
        }
    }

    static let missingChannelId = "MissingChannelId"
    static let badChannelId = "BadChannelId"
    static let channelNotRegistered = "ChannelNotRegistered"
    static let cannotCreateChannelConfig = "CannotCreateChannelConfig"
    static let featureNotEnabled = "FeatureNotEnabled"
    static let missingPushType = "MissingPushType"
    static let topicMismatch = "TopicMismatch"
    /// A management body that is not a JSON object of the documented keys; Apple's docs name no reason for it, so
    /// this is the one other broadcast clients report (see ../shared/APNS.md).
    static let badRequestPayload = "BadRequestPayload"

    /// The only push type a channel carries, as the management body spells it.
    static let channelPushType = "LiveActivity"
    /// The largest broadcast payload.
    static let maximumBroadcastPayloadSize = 5120
    /// The largest channel-management body read; the documented one is under 60 bytes.
    static let maximumManagementBodySize = 1024
    /// The longest `apns-channel-id` accepted (APNs' are 24 characters).
    static let maximumChannelIDLength = 128

    /// The route for a `:path`, or nil when the path is not one of the broadcast endpoints' (the device route's).
    static func route(_ path: String) -> Route? {
        let channelPrefix = "/1/"
        let broadcastPrefix = "/4/"
        guard path.hasPrefix(channelPrefix) || path.hasPrefix(broadcastPrefix) else { return nil }
        let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        // A query string is not part of any endpoint: it makes the path bad, as on the device route.
        guard !path.contains("?"), segments.allSatisfy({ !$0.isEmpty }) else { return .badPath }
        switch segments.count {
        case 4 where segments[0] == "1" && segments[1] == "apps" && segments[3] == "channels":
            return .channels(bundleID: segments[2])
        case 4 where segments[0] == "1" && segments[1] == "apps" && segments[3] == "all-channels":
            return .allChannels(bundleID: segments[2])
        case 4 where segments[0] == "4" && segments[1] == "broadcasts" && segments[2] == "apps":
            return .broadcast(bundleID: segments[3])
        default:
            return .badPath
        }
    }

    /// The `apns-request-id` to answer with: the request's (when it is of a sane length), else a new UUID.
    static func requestID(_ headers: [(name: String, value: String)]) -> String {
        if let sent = value("apns-request-id", in: headers), !sent.isEmpty, sent.utf8.count <= 128 { return sent }
        return UUID().uuidString.lowercased()
    }

    /// `apns-channel-id`: missing → 400 MissingChannelId; not base64 of at least one byte, or longer than
    /// ``maximumChannelIDLength`` → 400 BadChannelId ("isn't properly encoded, or it's greater than the allowed
    /// length").
    static func channelID(_ headers: [(name: String, value: String)]) -> Result<String, Rejection> {
        guard let id = value("apns-channel-id", in: headers), !id.isEmpty else {
            return .failure(Rejection(status: 400, reason: missingChannelId))
        }
        guard id.utf8.count <= maximumChannelIDLength, let bytes = Data(base64Encoded: id), !bytes.isEmpty else {
            return .failure(Rejection(status: 400, reason: badChannelId))
        }
        return .success(id)
    }

    /// The body of a channel creation, `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`, read into its
    /// storage policy. Over ``maximumManagementBodySize`` → 413 PayloadTooLarge; not a JSON object → 400
    /// BadRequestPayload; `push-type` missing → 400 MissingPushType, not `LiveActivity` → 400 InvalidPushType;
    /// `message-storage-policy` missing or not 0 or 1 → 400 BadRequestPayload.
    static func channelCreation(_ body: [UInt8], size: Int) -> Result<Int, Rejection> {
        guard size <= maximumManagementBodySize else { return .failure(Rejection(413, .payloadTooLarge)) }
        guard case .object(let fields)? = try? PayloadValue(json: body) else {
            return .failure(Rejection(status: 400, reason: badRequestPayload))
        }
        guard let pushType = fields["push-type"] else {
            return .failure(Rejection(status: 400, reason: missingPushType))
        }
        guard case .string(channelPushType) = pushType else { return .failure(Rejection(400, .invalidPushType)) }
        guard case .integer(let policy)? = fields["message-storage-policy"], policy == 0 || policy == 1 else {
            return .failure(Rejection(status: 400, reason: badRequestPayload))
        }
        return .success(Int(policy))
    }

    /// The header fields of a broadcast send that passed every stateless check.
    struct SendFields: Sendable, Hashable {
        var channelID: String
        var topic: String?
        var priority: Int
        var expiration: Int64?
    }

    /// A broadcast's headers, in this order: `apns-channel-id` (MissingChannelId, BadChannelId); `apns-push-type`
    /// missing → 400 MissingPushType, not `liveactivity` → 400 InvalidPushType; `apns-topic`, if sent, not
    /// `<bundle>.push-type.liveactivity` → 400 TopicMismatch; `apns-expiration` not a non-negative integer → 400
    /// BadExpirationDate; `apns-priority` not 5 or 10 → 400 BadPriority (absent means 10).
    static func sendFields(_ headers: [(name: String, value: String)], bundleID: String) -> Result<
        SendFields, Rejection
    > {
        let channelID: String
        switch self.channelID(headers) {
        case .success(let id): channelID = id
        case .failure(let rejection): return .failure(rejection)
        }
        guard let pushType = value("apns-push-type", in: headers), !pushType.isEmpty else {
            return .failure(Rejection(status: 400, reason: missingPushType))
        }
        guard PushType(rawValue: pushType) == .liveactivity else { return .failure(Rejection(400, .invalidPushType)) }
        let topic = value("apns-topic", in: headers)
        if let topic, topic != bundleID + PushType.liveactivity.topicSuffix {
            return .failure(Rejection(status: 400, reason: topicMismatch))
        }
        var expiration: Int64?
        if let raw = value("apns-expiration", in: headers) {
            guard let parsed = Int64(raw), parsed >= 0 else { return .failure(Rejection(400, .badExpirationDate)) }
            expiration = parsed
        }
        var priority = 10
        if let raw = value("apns-priority", in: headers) {
            guard let parsed = Int(raw), parsed == 5 || parsed == 10 else {
                return .failure(Rejection(400, .badPriority))
            }
            priority = parsed
        }
        return .success(SendFields(channelID: channelID, topic: topic, priority: priority, expiration: expiration))
    }

    static func value(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == name }?.value
    }
}
