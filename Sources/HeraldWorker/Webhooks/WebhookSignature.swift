import Crypto

/// The signature on every webhook request, in the header `x-herald-signature`: `t=<unix seconds>,v1=<hex>`, where
/// `v1` is HMAC-SHA256, keyed with the app's webhook secret, of `<t>.` followed by the request body. A receiver
/// recomputes it over the raw body, compares in constant time, and refuses a `t` far from its clock (a replay).
public enum WebhookSignature {
    /// The header that carries the signature.
    public static let header = "x-herald-signature"

    /// The header value for `body`, signed at `time` (seconds since 1970).
    public static func sign(_ body: [UInt8], secret: [UInt8], at time: Int64) -> String {
        "t=\(time),v1=" + hex(mac(body, secret: secret, at: time))
    }

    /// Whether `header` is a signature of `body` with `secret`, made within `tolerance` seconds of `now`: what a
    /// receiver checks (docs/events.md), here for the tests.
    public static func verify(
        _ header: String, body: [UInt8], secret: [UInt8], now: Int64, tolerance: Int64 = 300
    ) -> Bool {
        var time: Int64? = nil
        var signature: [UInt8]? = nil
        for part in header.split(separator: ",") {
            if part.hasPrefix("t=") { time = Int64(part.dropFirst(2)) }
            if part.hasPrefix("v1=") { signature = bytes(fromHex: part.dropFirst(3)) }
        }
        guard let time, let signature, abs(now - time) <= tolerance else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            signature, authenticating: signed(body, at: time), using: SymmetricKey(data: secret))
    }

    private static func mac(_ body: [UInt8], secret: [UInt8], at time: Int64) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: signed(body, at: time), using: SymmetricKey(data: secret)))
    }

    private static func signed(_ body: [UInt8], at time: Int64) -> [UInt8] { Array("\(time).".utf8) + body }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]] }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(fromHex text: Substring) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
