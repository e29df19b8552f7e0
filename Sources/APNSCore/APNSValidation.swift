/// A rule of Apple's that a notification breaks, found before anything is sent.
public struct APNSValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which rule.
    public enum Rule: String, Sendable, Hashable {
        case payloadTooLarge
        case payloadEmpty
        case collapseIDTooLong
        case collapseIDInvalid
        case invalidPriority
        case backgroundNeedsContentAvailable
        case backgroundPriority
        case invalidDeviceToken
        case invalidPushType
        case missingTopic
    }

    /// The rule that was broken.
    public var rule: Rule
    /// A sentence naming the rule and the offending size or value (never the token or the payload).
    public var message: String

    public init(_ rule: Rule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    public var description: String { message }
}

extension APNSRequest {
    /// Checks the request against Apple's rules: payload size per push type, collapse id length, priority values and
    /// the background rules, token format and apns-id format.
    ///
    /// - Parameter maximumPayloadSize: a limit other than the push type's (a Live Activity broadcast allows 5,120
    ///   bytes).
    public func validate(maximumPayloadSize: Int? = nil) throws(APNSValidationError) {
        guard !topic.isEmpty else { throw APNSValidationError(.missingTopic, "apns-topic is empty") }
        guard !pushType.rawValue.isEmpty else {
            throw APNSValidationError(.invalidPushType, "apns-push-type is empty")
        }
        guard DeviceToken.isValidHex(deviceToken.hex) else {
            throw APNSValidationError(.invalidDeviceToken, "device token is not even-length hexadecimal")
        }
        guard !payload.isEmpty else { throw APNSValidationError(.payloadEmpty, "payload is empty") }
        let limit = maximumPayloadSize ?? pushType.maximumPayloadSize
        guard payload.count <= limit else {
            throw APNSValidationError(
                .payloadTooLarge,
                "payload is \(payload.count) bytes, over the \(limit)-byte limit for push type \(pushType)"
            )
        }
        if let collapseID, collapseID.utf8.count > 64 {
            throw APNSValidationError(
                .collapseIDTooLong,
                "apns-collapse-id is \(collapseID.utf8.count) bytes, over the 64-byte limit"
            )
        }
        if let collapseID, !Self.isHeaderText(collapseID) {
            throw APNSValidationError(
                .collapseIDInvalid, "apns-collapse-id contains a control character (CR, LF, NUL or another)")
        }
        if let priority, !priority.isValid {
            throw APNSValidationError(.invalidPriority, "apns-priority \(priority.rawValue) is not 1, 5 or 10")
        }
        if pushType == .background {
            if priority == .immediate {
                throw APNSValidationError(.backgroundPriority, "background notifications must use priority 5, not 10")
            }
            if !Self.payloadHasContentAvailable(payload) {
                throw APNSValidationError(
                    .backgroundNeedsContentAvailable,
                    "background notifications need aps.content-available = 1"
                )
            }
        }
    }

    /// A cheap check for `"content-available":1` in the payload bytes.
    static func payloadHasContentAvailable(_ payload: [UInt8]) -> Bool {
        ErrorBody.integerValue(for: "content-available", in: payload) == 1
    }

    /// Whether `text` may stand in an HTTP/2 header value as it is: no control character (C0, DEL), which would
    /// be refused by the peer or split the header.
    public static func isHeaderText(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
    }

    /// Whether `text` is 8-4-4-4-12 lowercase hexadecimal.
    public static func isCanonicalUUID(_ text: String) -> Bool {
        APNSID(text) != nil
    }
}
