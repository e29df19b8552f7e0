/// What APNs answered to one notification: success or a rejection with its reason.
///
/// Rejections are values, not errors: only a failure of the transport (no answer at all) throws.
public struct APNSOutcome: Sendable, Hashable {
    /// The HTTP status, e.g. 200 or 410.
    public var status: Int
    /// The rejection reason, nil on success or when the body had none.
    public var reason: APNSReason?
    /// The `apns-id` response header: the request's id or the one APNs generated.
    public var apnsID: String?
    /// The `apns-unique-id` response header (development environment only).
    public var apnsUniqueID: String?
    /// For 410: when APNs learned the token was no longer valid, in milliseconds since 1970.
    public var timestamp: Int64?

    public init(
        status: Int,
        reason: APNSReason? = nil,
        apnsID: String? = nil,
        apnsUniqueID: String? = nil,
        timestamp: Int64? = nil
    ) {
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.timestamp = timestamp
    }

    /// Decodes a response from its status, headers and body.
    ///
    /// An empty, non-JSON or oversized body never loses the status: the reason is then nil, or the raw text if the
    /// body was short printable text.
    public init(status: Int, apnsID: String?, apnsUniqueID: String?, body: some Collection<UInt8>) {
        self.init(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID)
        guard status != 200, !body.isEmpty, body.count <= 8192 else { return }
        let parsed = ErrorBody.parse(Array(body))
        self.reason = parsed.reason.map(APNSReason.init(rawValue:))
        self.timestamp = parsed.timestamp
    }

    /// Whether APNs accepted the notification.
    public var isSuccess: Bool { status == 200 }
}

/// A tiny, allocation-light reader for APNs' error body `{"reason":"…","timestamp":123}`.
///
/// Foundation's JSONSerialization would do, but this runs for every rejected notification and must not throw.
enum ErrorBody {
    static func parse(_ bytes: [UInt8]) -> (reason: String?, timestamp: Int64?) {
        (stringValue(for: "reason", in: bytes), integerValue(for: "timestamp", in: bytes))
    }

    private static func valueStart(for key: String, in bytes: [UInt8]) -> Int? {
        let needle = Array("\"\(key)\"".utf8)
        guard bytes.count >= needle.count else { return nil }
        var i = 0
        while i <= bytes.count - needle.count {
            if bytes[i] == needle[0] && Array(bytes[i..<i + needle.count]) == needle {
                var j = i + needle.count
                while j < bytes.count, bytes[j] == UInt8(ascii: " ") { j += 1 }
                guard j < bytes.count, bytes[j] == UInt8(ascii: ":") else { return nil }
                j += 1
                while j < bytes.count, bytes[j] == UInt8(ascii: " ") { j += 1 }
                return j
            }
            i += 1
        }
        return nil
    }

    static func stringValue(for key: String, in bytes: [UInt8]) -> String? {
        guard var i = valueStart(for: key, in: bytes), i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
            return nil
        }
        i += 1
        var out: [UInt8] = []
        while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
            if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count { i += 1 }
            out.append(bytes[i])
            i += 1
        }
        guard i < bytes.count, out.count <= 128 else { return nil }
        return String(decoding: out, as: UTF8.self)
    }

    /// The latest `timestamp` kept: the end of year 9999 in milliseconds, within what PostgreSQL's `to_timestamp`
    /// and Foundation's `Date` take. A larger one is not APNs' (a proxy, a custom endpoint) and is dropped.
    static let timestampLimit: Int64 = 253_402_300_799_999

    /// The leading digits of the value as a non-negative integer of at most `limit`; nil for none or for a larger
    /// number, however many digits it has (the value is bounded before each step, so nothing overflows).
    static func integerValue(for key: String, in bytes: [UInt8], limit: Int64 = timestampLimit) -> Int64? {
        guard var i = valueStart(for: key, in: bytes) else { return nil }
        var value: Int64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
            let digit = Int64(bytes[i] - UInt8(ascii: "0"))
            guard value <= (limit - digit) / 10 else { return nil }
            value = value * 10 + digit
            digits += 1
            i += 1
        }
        return digits > 0 ? value : nil
    }
}
