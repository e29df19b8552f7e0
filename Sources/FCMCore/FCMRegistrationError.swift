/// Why a string is not an Android device identifier. Never contains the identifier: at most the one offending
/// character and its position.
public struct FCMRegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Reason: Sendable, Hashable {
        case empty
        /// Fewer characters than the kind allows (its length).
        case tooShort(length: Int)
        /// More characters than the kind allows (its length).
        case tooLong(length: Int)
        /// An FID must be exactly 22 characters (its length).
        case wrongLength(length: Int)
        /// A character outside the kind's alphabet, at 1-based `position` (the character, or `U+XXXX` if it is not
        /// printable ASCII).
        case badCharacter(position: Int, character: String)
        /// An FID's first character must be `c`, `d`, `e` or `f`.
        case badFirstCharacter(character: String)
    }

    /// What kind of identifier was being read.
    public var kind: FCMTarget.Kind
    /// The rule that was broken.
    public var reason: Reason

    /// Creates an error for an identifier of `kind`.
    public init(kind: FCMTarget.Kind, reason: Reason) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String {
        let name = kind == .token ? "FCM registration token" : "Firebase installation ID"
        switch reason {
        case .empty: return "\(name) is empty"
        case .tooShort(let length):
            return "\(name) is too short (\(length) characters, at least \(FCMTarget.tokenLengths.lowerBound))"
        case .tooLong(let length):
            return "\(name) is too long (\(length) characters, at most \(FCMTarget.tokenLengths.upperBound))"
        case .wrongLength(let length):
            return "\(name) has \(length) characters, not \(FCMTarget.fidLength)"
        case .badCharacter(let position, let character):
            return "\(name) has a character not allowed (\(character)) at position \(position)"
        case .badFirstCharacter(let character):
            return "\(name) starts with \(character), not c, d, e or f"
        }
    }
}
