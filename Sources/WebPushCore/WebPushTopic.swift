import Crypto

/// The `Topic` request header (RFC 8030 section 5.4): a newer message with the same topic replaces a pending one at
/// the push service. At most 32 characters of the base64url alphabet; Apple also refuses lengths of 4n+1
/// (`BadWebPushTopic`), which are not valid base64url.
public struct WebPushTopic: Sendable, Hashable, CustomStringConvertible {
    /// The header's value.
    public let value: String

    /// The longest topic taken.
    public static let maximumLength = 32

    /// Checks `text` against the rules; the error names the rule broken.
    public init(_ text: String) throws(WebPushTopicError) {
        if let problem = Self.problem(text) { throw WebPushTopicError(description: problem) }
        self.value = text
    }

    /// A topic for a collapse id: the id itself when it is a valid topic, else the base64url form of the first 24
    /// bytes of its SHA-256 (always 32 characters, so any id, however long or whatever its characters, becomes a
    /// topic, and equal ids give equal topics).
    public static func derived(from collapseID: String) -> WebPushTopic {
        if problem(collapseID) == nil { return WebPushTopic(unchecked: collapseID) }
        let digest = SHA256.hash(data: Array(collapseID.utf8))
        return WebPushTopic(unchecked: Base64URL.encode(digest.prefix(24)))
    }

    private init(unchecked value: String) { self.value = value }

    private static func problem(_ text: String) -> String? {
        let count = text.utf8.count
        guard count > 0 else { return "the topic is empty" }
        guard count <= maximumLength else {
            return "the topic is \(count) characters; at most \(maximumLength)"
        }
        guard text.utf8.allSatisfy(Base64URL.isAlphabet) else {
            return "the topic may hold only A-Z, a-z, 0-9, '-' and '_'"
        }
        guard count % 4 != 1 else {
            return "the topic is \(count) characters; a length of 4n+1 is not base64url (Apple: BadWebPushTopic)"
        }
        return nil
    }

    /// The header's value.
    public var description: String { value }
}

/// A topic that breaks a rule; the message names the rule.
public struct WebPushTopicError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule broken.
    public let description: String
}
