import Crypto
import Foundation

/// Per-app API keys: 32 random bytes shown once as `hk_` + base64url; only their SHA-256 is stored.
public enum APIKey {
    /// A new random key.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "hk_" + base64
    }

    /// The lowercase hex SHA-256 the store keeps. A key has 256 random bits, so a fast hash is enough: there is
    /// nothing to brute-force that a slow hash would protect.
    public static func hash(_ key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The first characters, to tell keys apart in listings without revealing them.
    public static func prefix(_ key: String) -> String { String(key.prefix(7)) }
}
