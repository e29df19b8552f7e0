/// The request body of one job's message, encoded once with a hole for the target:
/// `{"message":{"<kind>":"<value>",<the other fields, keys sorted>}[,"validate_only":true]}`.
///
/// `body(for:)` runs per device: it copies the prefix, the target and the suffix, and does nothing else.
public struct FCMMessageTemplate: Sendable, Hashable {
    /// Whether FCM is asked to validate only.
    public let validateOnly: Bool
    /// The payload size counted against `FCMMessage.maximumPayloadSize`.
    public let payloadSize: Int
    /// Everything after the target's closing quote.
    let suffix: [UInt8]

    static let prefix = Array(#"{"message":{""#.utf8)

    init(members: [String: JSON], validateOnly: Bool, payloadSize: Int) {
        var encoded: [UInt8] = []
        JSON.writeMembers(members, to: &encoded)
        self.init(encodedMembers: encoded, validateOnly: validateOnly, payloadSize: payloadSize)
    }

    /// From the message's members already written (`"key":value` pairs, keys sorted, without braces).
    init(encodedMembers: [UInt8], validateOnly: Bool, payloadSize: Int) {
        var suffix: [UInt8] = []
        if !encodedMembers.isEmpty {
            suffix.append(UInt8(ascii: ","))
            suffix.append(contentsOf: encodedMembers)
        }
        suffix.append(UInt8(ascii: "}"))
        if validateOnly { suffix.append(contentsOf: #","validate_only":true"#.utf8) }
        suffix.append(UInt8(ascii: "}"))
        self.suffix = suffix
        self.validateOnly = validateOnly
        self.payloadSize = payloadSize
    }

    /// From a suffix already written: `,<members>}` (or `}` alone), `,"validate_only":true` if asked, `}`.
    init(suffix: [UInt8], validateOnly: Bool, payloadSize: Int) {
        self.suffix = suffix
        self.validateOnly = validateOnly
        self.payloadSize = payloadSize
    }

    /// The request body for `target`.
    public func body(for target: FCMTarget) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(Self.prefix.count + target.value.utf8.count + suffix.count + 12)
        Self.writeTarget(target, to: &body)
        body.append(contentsOf: suffix)
        return body
    }

    /// `{"message":{"<kind>":"<value>"`: the body up to the target's closing quote.
    static func writeTarget(_ target: FCMTarget, to body: inout [UInt8]) {
        body.append(contentsOf: Self.prefix)
        body.append(contentsOf: target.kind.rawValue.utf8)
        body.append(contentsOf: #"":"#.utf8)
        // A validated target needs no escaping (its characters are plain): its bytes are copied as they are, in one
        // go. `writeString` keeps a trusted one that is not plain safe.
        var value = target.value
        let copied = value.withUTF8 { bytes -> Bool in
            guard bytes.allSatisfy(Self.isPlain) else { return false }
            body.append(UInt8(ascii: "\""))
            body.append(contentsOf: bytes)
            body.append(UInt8(ascii: "\""))
            return true
        }
        if !copied { JSON.writeString(target.value, to: &body) }
    }

    /// A byte that stands for itself inside a JSON string: printable ASCII other than `"` and `\`.
    @inline(__always)
    static func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7f && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
