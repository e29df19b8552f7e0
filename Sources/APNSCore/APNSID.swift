/// An `apns-id`: a UUID, written in the canonical lowercase 8-4-4-4-12 form APNs requires.
///
/// Held as its 128 bits, so that a request carries no string: the header encoder writes the 36 characters straight
/// into its buffer (`write(into:)`). Only a canonical lowercase UUID can be made from text (`init?(_:)`), so a
/// request's `apns-id` is valid by construction.
public struct APNSID: Sendable, Hashable, CustomStringConvertible {
    /// The first and last 64 bits, most significant first.
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads a canonical lowercase UUID; nil for anything else (upper case, braces, missing dashes).
    public init?(_ text: some StringProtocol) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        for (position, byte) in text.utf8.enumerated() {
            guard position < 36 else { return nil }
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte &- UInt8(ascii: "a") &+ 10
            default: return nil
            }
            if count < 16 {
                high = high << 4 | UInt64(nibble)
            } else {
                low = low << 4 | UInt64(nibble)
            }
            count += 1
        }
        guard count == 32 else { return nil }
        self.init(high: high, low: low)
    }

    /// Appends the 36 characters of the canonical form to `bytes`.
    public func write(into bytes: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        func put(_ value: UInt64, nibbles: Int) {
            for shift in stride(from: (nibbles - 1) * 4, through: 0, by: -4) {
                bytes.append(digits.utf8Start[Int((value >> UInt64(shift)) & 0xF)])
            }
        }
        put(high >> 32, nibbles: 8)
        bytes.append(UInt8(ascii: "-"))
        put((high >> 16) & 0xFFFF, nibbles: 4)
        bytes.append(UInt8(ascii: "-"))
        put(high & 0xFFFF, nibbles: 4)
        bytes.append(UInt8(ascii: "-"))
        put(low >> 48, nibbles: 4)
        bytes.append(UInt8(ascii: "-"))
        put(low & 0xFFFF_FFFF_FFFF, nibbles: 12)
    }

    /// The canonical lowercase form.
    public var description: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        write(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
