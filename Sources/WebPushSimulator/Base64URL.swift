import Foundation

/// Base64url without padding (RFC 4648 §5, as RFC 8291 and JWTs use it). The simulator's own copy: it shares no code
/// with the sender it checks.
enum Base64URL {
    /// Encodes without padding.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url; nil for any character outside the alphabet (padding included) or a length of
    /// 4n+1.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.count % 4 != 1, text.utf8.allSatisfy(isAlphabet) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }

    /// Whether `byte` is one of `A–Z a–z 0–9 - _`.
    static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
