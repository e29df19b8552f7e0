/// Where an FCM message goes on Android: a registration token (`message.token`) or a Firebase Installation ID
/// (`message.fid`). Devices keep their kind, and a message targets the matching field.
///
/// Its `description` is redacted (the kind and the last four characters) so that an identifier never reaches a log
/// line by accident; `value` is the full identifier for the request body and the database.
public struct FCMTarget: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The field of the Message resource that carries the identifier.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `message.token`: a registration token from `FirebaseMessaging.getToken()`.
        case token
        /// `message.fid`: a Firebase Installation ID from `onRegistered(installationId)`.
        case fid
    }

    /// The accepted length of a registration token. Real ones are about 140–180 characters.
    public static let tokenLengths = 20...4096
    /// The length of an FID: 22 base64url characters (128 bits, the first 4 of which are `0111`).
    public static let fidLength = 22

    /// The field the identifier goes in.
    public let kind: Kind
    /// The identifier as FCM expects it.
    public let value: String

    /// Validates `value` as an identifier of `kind`.
    public init(kind: Kind, value: String) throws(FCMRegistrationError) {
        switch kind {
        case .token: try Self.validateToken(value)
        case .fid: try Self.validateFID(value)
        }
        self.kind = kind
        self.value = value
    }

    /// Validates a registration token: 20…4096 characters of `A-Z a-z 0-9 _ : -`.
    public init(token: String) throws(FCMRegistrationError) { try self.init(kind: .token, value: token) }

    /// Validates an FID: exactly 22 characters of `A-Z a-z 0-9 _ -`, the first one of `c d e f`.
    public init(fid: String) throws(FCMRegistrationError) { try self.init(kind: .fid, value: fid) }

    /// Wraps a value already validated (e.g. read back from the database).
    public init(trustedKind kind: Kind, value: String) {
        self.kind = kind
        self.value = value
    }

    static func validateToken(_ value: String) throws(FCMRegistrationError) {
        let count = value.utf8.count
        guard count > 0 else { throw FCMRegistrationError(kind: .token, reason: .empty) }
        try checkAlphabet(value, kind: .token, allowsColon: true)
        guard count >= tokenLengths.lowerBound else {
            throw FCMRegistrationError(kind: .token, reason: .tooShort(length: count))
        }
        guard count <= tokenLengths.upperBound else {
            throw FCMRegistrationError(kind: .token, reason: .tooLong(length: count))
        }
    }

    static func validateFID(_ value: String) throws(FCMRegistrationError) {
        let count = value.utf8.count
        guard count > 0 else { throw FCMRegistrationError(kind: .fid, reason: .empty) }
        // The length first: a long string is not scanned for characters before being refused.
        guard count == fidLength else { throw FCMRegistrationError(kind: .fid, reason: .wrongLength(length: count)) }
        try checkAlphabet(value, kind: .fid, allowsColon: false)
        let first = value.utf8.first!
        guard (UInt8(ascii: "c")...UInt8(ascii: "f")).contains(first) else {
            throw FCMRegistrationError(kind: .fid, reason: .badFirstCharacter(character: String(UnicodeScalar(first))))
        }
    }

    /// Refuses the first byte outside `A-Z a-z 0-9 _ -` (and `:` for tokens), naming its 1-based position.
    /// One pass over the contiguous UTF-8 bytes: a job's listed token is checked on every job, and iterating the
    /// `UTF8View` with offsets cost as much as the rest of the token's handling.
    private static func checkAlphabet(_ value: String, kind: Kind, allowsColon: Bool) throws(FCMRegistrationError) {
        var text = value
        let bad = text.withUTF8 { bytes -> (offset: Int, byte: UInt8)? in
            for offset in bytes.indices {
                let byte = bytes[offset]
                if Validation.isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    || (allowsColon && byte == UInt8(ascii: ":"))
                {
                    continue
                }
                return (offset, byte)
            }
            return nil
        }
        guard let (offset, byte) = bad else { return }
        let shown =
            Validation.isPlainPrintable(byte) ? String(UnicodeScalar(byte)) : Self.codePoint(of: value, at: offset)
        throw FCMRegistrationError(kind: kind, reason: .badCharacter(position: offset + 1, character: shown))
    }

    /// `U+XXXX` for the scalar starting at UTF-8 offset `offset` (or the byte if it is a continuation byte).
    private static func codePoint(of value: String, at offset: Int) -> String {
        let index = value.utf8.index(value.utf8.startIndex, offsetBy: offset)
        let scalar = index.samePosition(in: value.unicodeScalars).map { value.unicodeScalars[$0].value }
        let number = scalar ?? UInt32(value.utf8[index])
        let hex = String(number, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// A redacted form safe for logs: `…` and the last four characters.
    public var redacted: String { "…" + value.suffix(4) }

    public var description: String { "\(kind.rawValue):\(redacted)" }
    public var debugDescription: String { "FCMTarget(\(description))" }
}
