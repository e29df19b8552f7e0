import APNSCore
import Foundation

/// A status and reason the simulator answers instead of 200.
struct Rejection: Sendable, Hashable, Error {
    var status: Int
    var reason: String
    /// For 410 only: milliseconds since 1970.
    var timestamp: Int64? = nil

    init(_ status: Int, _ reason: APNSReason, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason.rawValue
        self.timestamp = timestamp
    }

    init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }

    /// The key counts are kept under: `"410 Unregistered"`.
    var countKey: String { "\(status) \(reason)" }

    /// The JSON body APNs sends with a rejection.
    var body: String {
        let escaped = reason.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        if let timestamp { return #"{"reason":"\#(escaped)","timestamp":\#(timestamp)}"# }
        return #"{"reason":"\#(escaped)"}"#
    }
}

/// The checks APNs makes on a request's headers and body that need no state, in the order the simulator applies
/// them. Pure: header pairs in, a value or a ``Rejection`` out.
enum RequestValidation {
    /// What the first checks find: the device token and the bearer token (if any).
    struct Target: Sendable, Hashable {
        var deviceToken: String
        var authorization: String?
    }

    /// The `apns-*` fields of a request that passed every stateless check.
    struct Fields: Sendable, Hashable {
        var topic: String
        var bundleID: String
        var pushType: PushType
        var priority: Int
        var expiration: Int64?
        var collapseID: String?
        var apnsID: String?
    }

    /// Repeated headers, `:method` and `:path`. Run first, before authentication.
    static func target(_ headers: [(name: String, value: String)]) -> Result<Target, Rejection> {
        var seen = Set<String>()
        for header in headers where !seen.insert(header.name).inserted {
            return .failure(Rejection(400, .duplicateHeaders))
        }
        let method = value(":method", in: headers)
        guard method == "POST" else { return .failure(Rejection(405, .methodNotAllowed)) }
        let prefix = "/3/device/"
        guard let path = value(":path", in: headers), path.hasPrefix(prefix) else {
            return .failure(Rejection(404, .badPath))
        }
        var token = Substring(path.dropFirst(prefix.count))
        // A query string is not part of the token; APNs ignores none, so neither do we: it makes the token bad.
        guard !token.isEmpty else { return .failure(Rejection(400, .missingDeviceToken)) }
        guard !token.contains("/") else { return .failure(Rejection(404, .badPath)) }
        guard DeviceToken.isValidHex(token) else { return .failure(Rejection(400, .badDeviceToken)) }
        token = Substring(token.lowercased())
        return .success(Target(deviceToken: String(token), authorization: value("authorization", in: headers)))
    }

    /// The bearer token from an `authorization` value, or a rejection for a missing or malformed header.
    static func bearer(_ authorization: String?) -> Result<String, Rejection> {
        guard let authorization, !authorization.isEmpty else {
            return .failure(Rejection(403, .missingProviderToken))
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            return .failure(Rejection(403, .invalidProviderToken))
        }
        return .success(String(parts[1]))
    }

    /// Topic, push type, priority, expiration, collapse id, apns-id and payload size. Run after authentication.
    ///
    /// `allowedBundleIDs` nil allows any topic.
    static func fields(
        _ headers: [(name: String, value: String)],
        payloadSize: Int,
        allowedBundleIDs: Set<String>?
    ) -> Result<Fields, Rejection> {
        guard let topic = value("apns-topic", in: headers), !topic.isEmpty else {
            return .failure(Rejection(400, .missingTopic))
        }
        guard topic.allSatisfy({ !$0.isWhitespace }) else { return .failure(Rejection(400, .badTopic)) }

        let pushType: PushType
        if let raw = value("apns-push-type", in: headers) {
            pushType = PushType(rawValue: raw)
            guard pushType.isKnown else { return .failure(Rejection(400, .invalidPushType)) }
        } else {
            // Optional except on watchOS; APNs then treats the notification as an alert.
            pushType = .alert
        }

        // The token is bound to bundle id + suffix: a VoIP push to the bare bundle id names a topic the (VoIP) token
        // is not for, which APNs answers DeviceTokenNotForTopic.
        let suffix = pushType.topicSuffix
        var bundleID = topic
        if !suffix.isEmpty {
            guard topic.hasSuffix(suffix), topic.count > suffix.count else {
                return .failure(Rejection(400, .deviceTokenNotForTopic))
            }
            bundleID = String(topic.dropLast(suffix.count))
        }
        if let allowedBundleIDs, !allowedBundleIDs.contains(bundleID) {
            return .failure(Rejection(400, .topicDisallowed))
        }

        var priority = 10
        if let raw = value("apns-priority", in: headers) {
            guard let parsed = Int(raw), Priority(rawValue: parsed).isValid else {
                return .failure(Rejection(400, .badPriority))
            }
            priority = parsed
            // "Using priority 10 is an error": only an explicit value other than 5 is rejected.
            if pushType == .background, parsed != 5 { return .failure(Rejection(400, .badPriority)) }
        }

        var expiration: Int64?
        if let raw = value("apns-expiration", in: headers) {
            guard let parsed = Int64(raw), parsed >= 0 else { return .failure(Rejection(400, .badExpirationDate)) }
            expiration = parsed
        }

        let collapseID = value("apns-collapse-id", in: headers)
        if let collapseID, collapseID.utf8.count > 64 { return .failure(Rejection(400, .badCollapseId)) }

        let apnsID = value("apns-id", in: headers)
        if let apnsID, !APNSRequest.isCanonicalUUID(apnsID) { return .failure(Rejection(400, .badMessageId)) }

        guard payloadSize > 0 else { return .failure(Rejection(400, .payloadEmpty)) }
        guard payloadSize <= pushType.maximumPayloadSize else { return .failure(Rejection(413, .payloadTooLarge)) }

        return .success(
            Fields(
                topic: topic,
                bundleID: bundleID,
                pushType: pushType,
                priority: priority,
                expiration: expiration,
                collapseID: collapseID,
                apnsID: apnsID
            )
        )
    }

    /// Maps a verifier error to APNs' reason.
    static func rejection(for error: ProviderTokenError) -> Rejection {
        error.code == .expired ? Rejection(403, .expiredProviderToken) : Rejection(403, .invalidProviderToken)
    }

    private static func value(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == name }?.value
    }
}
