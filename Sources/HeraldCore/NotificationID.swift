import APNSCore

/// The `apns-id` of one job's notification to one device, derived from the app, the job id and the token: every
/// send of it (an in-process retry, a retry batch, a redelivery, another worker) carries the same id, so a re-send
/// is recognisable in Herald's records and in Apple's delivery log.
///
/// The id is a UUID in RFC 9562's custom layout (version 8), filled from two 64-bit FNV-1a hashes: a few
/// multiplications per byte, no Foundation UUID and no randomness per notification. The hashes' state after the
/// app and job id is computed once per batch.
public struct NotificationID: Sendable {
    private let prefix: (UInt64, UInt64)

    /// FNV-1a's offset basis, and a second basis for the other half.
    private static let bases: (UInt64, UInt64) = (0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142)
    private static let prime: UInt64 = 0x0000_0100_0000_01b3

    public init(app: String, job: String) {
        var state = Self.bases
        // A NUL after each keeps ("ab", "c") apart from ("a", "bc").
        Self.mix(app, into: &state)
        Self.mix(byte: 0, into: &state)
        Self.mix(job, into: &state)
        Self.mix(byte: 0, into: &state)
        prefix = state
    }

    /// The id of the notification to `token`.
    public func id(for token: DeviceToken) -> APNSID {
        var state = prefix
        Self.mix(token.hex, into: &state)
        return Self.uuid(state)
    }

    /// The `apns-request-id` of the job's broadcast to `channel`: every try of it (in process, after a
    /// redelivery, on another worker) carries the same id, so that a retried broadcast is recognisable.
    public func id(forChannel channel: String) -> APNSID {
        var state = prefix
        // A byte no token's hex holds first keeps a channel's id apart from a device's.
        Self.mix(byte: UInt8(ascii: "#"), into: &state)
        Self.mix(channel, into: &state)
        return Self.uuid(state)
    }

    /// The hashes' state as a UUID: version 8 in the high nibble of the 7th byte, variant 10 in the top bits of the
    /// 9th.
    private static func uuid(_ state: (UInt64, UInt64)) -> APNSID {
        APNSID(
            high: (state.0 & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_8000,
            low: (state.1 & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000)
    }

    /// Mixes `text`'s UTF-8 (contiguous in a native string: one loop over its buffer per notification).
    private static func mix(_ text: String, into state: inout (UInt64, UInt64)) {
        var text = text
        text.withUTF8 { buffer in
            for byte in buffer { mix(byte: byte, into: &state) }
        }
    }

    private static func mix(byte: UInt8, into state: inout (UInt64, UInt64)) {
        state.0 = (state.0 ^ UInt64(byte)) &* prime
        state.1 = (state.1 ^ UInt64(byte)) &* prime
    }
}
