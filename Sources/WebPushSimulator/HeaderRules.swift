/// The RFC 8030 headers a push service reads besides the body and `Authorization`, with the limits the big services
/// apply.
enum HeaderRules {
    /// The largest `TTL` accepted: 4 weeks (FCM's ceiling; autopush allows 30 days).
    static let maximumTTL = 2_419_200

    /// The `Urgency` values of RFC 8030 section 5.3.
    static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]

    /// `TTL`: a decimal integer from 0 to ``maximumTTL``; nil for anything else (signs, spaces and fractions
    /// included).
    static func ttl(_ value: String) -> Int? {
        guard !value.isEmpty, value.utf8.count <= 10, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let ttl = Int(value), ttl <= maximumTTL
        else { return nil }
        return ttl
    }

    /// `Topic`: at most 32 characters of the base64url alphabet, and (Apple) not of length 4n+1, which is no valid
    /// base64url.
    static func isValidTopic(_ topic: String) -> Bool {
        let count = topic.utf8.count
        return count >= 1 && count <= 32 && count % 4 != 1 && topic.utf8.allSatisfy(Base64URL.isAlphabet)
    }
}
