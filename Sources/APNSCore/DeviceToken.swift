/// A device token: the device's bytes as lowercase hexadecimal, as APNs expects in `:path`.
///
/// Its `description` is redacted (only the last four hex digits) so that a token can never reach a log line or an
/// error description by accident; `hex` is the full value for the request path and the database.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token as lowercase hexadecimal.
    public let hex: String

    /// The longest token accepted: 200 bytes.
    static let maximumHexDigits = 400

    /// Parses a token written as hexadecimal, accepting upper case, spaces and the `<ad853c20 3a9b…>` form that
    /// `-[NSData description]` produced (seed 000).
    ///
    /// Apple says not to assume a length, so any non-empty even number of hex digits up to 200 bytes is accepted.
    public init(parsing text: String) throws(DeviceTokenError) {
        // Most tokens arrive as APNs gives them: lowercase hexadecimal. Those are kept as they are.
        var text = text
        let canonical = text.withUTF8 { bytes in
            !bytes.isEmpty && bytes.count % 2 == 0 && bytes.count <= Self.maximumHexDigits
                && bytes.allSatisfy(Self.isLowercaseHexDigit)
        }
        if canonical {
            self.init(trustedHex: text)
        } else {
            try self.init(parsing: text[...])
        }
    }

    /// `init(parsing:)` for any string: the general path, which also rewrites upper case and drops separators.
    public init(parsing text: some StringProtocol) throws(DeviceTokenError) {
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        var sawContent = false
        for byte in text.utf8 {
            switch byte {
            case _ where Self.isLowercaseHexDigit(byte):
                hex.append(byte)
                sawContent = true
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                hex.append(byte + 32)
                sawContent = true
            case UInt8(ascii: " "), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\t"):
                continue
            default:
                throw DeviceTokenError(kind: .notHexadecimal)
            }
        }
        guard sawContent else { throw DeviceTokenError(kind: .empty) }
        guard hex.count % 2 == 0 else { throw DeviceTokenError(kind: .oddLength) }
        guard hex.count <= Self.maximumHexDigits else { throw DeviceTokenError(kind: .tooLong) }
        self.hex = String(decoding: hex, as: UTF8.self)
    }

    /// Wraps a value already known to be normalised lowercase hex (e.g. read back from the database).
    public init(trustedHex: String) {
        self.hex = trustedHex
    }

    /// Whether `text` is a non-empty, even-length string of lowercase or uppercase hex digits.
    public static func isValidHex(_ text: some StringProtocol) -> Bool {
        // A native string's bytes are checked in one loop over contiguous memory; called from another module, the
        // generic walk of `utf8` below went through the collection's witnesses for every byte (a single-device
        // job's 64 digits cost about a microsecond that way).
        if let result = text.utf8.withContiguousStorageIfAvailable(isValidHex(bytes:)) { return result }
        var count = 0
        for byte in text.utf8 {
            guard isHexDigit(byte) else { return false }
            count += 1
        }
        return count > 0 && count % 2 == 0
    }

    /// Whether `bytes` are a non-empty, even-length run of lowercase or uppercase hex digits.
    public static func isValidHex(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        !bytes.isEmpty && bytes.count % 2 == 0 && bytes.allSatisfy(isHexDigit)
    }

    @inline(__always)
    static func isHexDigit(_ byte: UInt8) -> Bool {
        isLowercaseHexDigit(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// Whether `byte` is 0-9 or a-f: a digit of a token as it is kept.
    @inline(__always)
    static func isLowercaseHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// A redacted form safe for logs: `…` and the last four hex digits.
    public var redacted: String { "…" + hex.suffix(4) }

    public var description: String { redacted }
    public var debugDescription: String { "DeviceToken(\(redacted))" }
}

/// Why a string is not a device token. Never contains the token itself.
public struct DeviceTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule that was broken.
    public enum Kind: Sendable, Hashable {
        case empty
        case notHexadecimal
        case oddLength
        case tooLong
    }

    public let kind: Kind

    public var description: String {
        switch kind {
        case .empty: "device token is empty"
        case .notHexadecimal: "device token is not hexadecimal"
        case .oddLength: "device token has an odd number of hex digits"
        case .tooLong: "device token is longer than 200 bytes"
        }
    }
}
