import Foundation

/// Base64url without padding (RFC 7515 §2), as JWTs use it.
package enum Base64URL {
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url; nil for any other character or an impossible length.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.count % 4 != 1,
            text.utf8.allSatisfy(isAlphabet)
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }

    /// Whether `byte` is one of base64url's 64 characters (`A-Z a-z 0-9 - _`).
    package static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
