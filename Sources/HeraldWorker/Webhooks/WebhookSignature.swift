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
        guard header.hasPrefix("t="), let time = Int64(header.dropFirst(2).prefix { $0 != "," }),
            abs(now - time) <= tolerance
        else { return false }
        // The header as it would be signed, compared in constant time.
        let expected = Array(sign(body, secret: secret, at: time).utf8)
        let given = Array(header.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
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
}
