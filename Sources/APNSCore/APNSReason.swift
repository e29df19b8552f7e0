/// The `reason` APNs gives when it rejects a notification.
///
/// An open set: every documented reason has a constant, and a reason Apple adds later is kept as its text
/// (`isKnown == false`) rather than lost.
public struct APNSReason: Sendable, Hashable, CustomStringConvertible {
    /// The reason string as APNs sent it.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    // 400
    public static let badCollapseId = APNSReason(rawValue: "BadCollapseId")
    public static let badDeviceToken = APNSReason(rawValue: "BadDeviceToken")
    public static let badExpirationDate = APNSReason(rawValue: "BadExpirationDate")
    public static let badMessageId = APNSReason(rawValue: "BadMessageId")
    public static let badPriority = APNSReason(rawValue: "BadPriority")
    public static let badTopic = APNSReason(rawValue: "BadTopic")
    public static let deviceTokenNotForTopic = APNSReason(rawValue: "DeviceTokenNotForTopic")
    public static let duplicateHeaders = APNSReason(rawValue: "DuplicateHeaders")
    public static let idleTimeout = APNSReason(rawValue: "IdleTimeout")
    public static let invalidPushType = APNSReason(rawValue: "InvalidPushType")
    public static let missingDeviceToken = APNSReason(rawValue: "MissingDeviceToken")
    public static let missingTopic = APNSReason(rawValue: "MissingTopic")
    public static let payloadEmpty = APNSReason(rawValue: "PayloadEmpty")
    public static let topicDisallowed = APNSReason(rawValue: "TopicDisallowed")
    // 403
    public static let badCertificate = APNSReason(rawValue: "BadCertificate")
    public static let badCertificateEnvironment = APNSReason(rawValue: "BadCertificateEnvironment")
    public static let expiredProviderToken = APNSReason(rawValue: "ExpiredProviderToken")
    public static let forbidden = APNSReason(rawValue: "Forbidden")
    public static let invalidProviderToken = APNSReason(rawValue: "InvalidProviderToken")
    public static let missingProviderToken = APNSReason(rawValue: "MissingProviderToken")
    public static let unrelatedKeyIdInToken = APNSReason(rawValue: "UnrelatedKeyIdInToken")
    public static let badEnvironmentKeyIdInToken = APNSReason(rawValue: "BadEnvironmentKeyIdInToken")
    /// Seen only in client code (APNSwift), never documented.
    public static let badEnvironmentKeyInToken = APNSReason(rawValue: "BadEnvironmentKeyInToken")
    // 404, 405
    public static let badPath = APNSReason(rawValue: "BadPath")
    public static let methodNotAllowed = APNSReason(rawValue: "MethodNotAllowed")
    // 410
    public static let expiredToken = APNSReason(rawValue: "ExpiredToken")
    public static let unregistered = APNSReason(rawValue: "Unregistered")
    // 413
    public static let payloadTooLarge = APNSReason(rawValue: "PayloadTooLarge")
    // 429
    public static let tooManyProviderTokenUpdates = APNSReason(rawValue: "TooManyProviderTokenUpdates")
    public static let tooManyRequests = APNSReason(rawValue: "TooManyRequests")
    // 500, 503
    public static let internalServerError = APNSReason(rawValue: "InternalServerError")
    public static let serviceUnavailable = APNSReason(rawValue: "ServiceUnavailable")
    public static let shutdown = APNSReason(rawValue: "Shutdown")

    /// Every reason in Apple's documentation (and the one undocumented one clients have seen), with its status.
    public static let documented: [(status: Int, reason: APNSReason)] = [
        (400, .badCollapseId), (400, .badDeviceToken), (400, .badExpirationDate), (400, .badMessageId),
        (400, .badPriority), (400, .badTopic), (400, .deviceTokenNotForTopic), (400, .duplicateHeaders),
        (400, .idleTimeout), (400, .invalidPushType), (400, .missingDeviceToken), (400, .missingTopic),
        (400, .payloadEmpty), (400, .topicDisallowed),
        (403, .badCertificate), (403, .badCertificateEnvironment), (403, .expiredProviderToken), (403, .forbidden),
        (403, .invalidProviderToken), (403, .missingProviderToken), (403, .unrelatedKeyIdInToken),
        (403, .badEnvironmentKeyIdInToken), (403, .badEnvironmentKeyInToken),
        (404, .badPath), (405, .methodNotAllowed),
        (410, .expiredToken), (410, .unregistered),
        (413, .payloadTooLarge),
        (429, .tooManyProviderTokenUpdates), (429, .tooManyRequests),
        (500, .internalServerError),
        (503, .serviceUnavailable), (503, .shutdown),
    ]

    /// Whether this reason is one Apple documents.
    public var isKnown: Bool { Self.documented.contains { $0.reason == self } }

    public var description: String { rawValue }
}
