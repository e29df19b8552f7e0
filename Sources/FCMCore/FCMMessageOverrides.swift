/// A job's `fcm` block: fields of the Message resource merged over what Herald builds — the top-level `android`,
/// `data`, `notification`, `fcm_options`, `apns` and `webpush`, and within them only fields FCM defines, with
/// their types checked. The target (`token`, `topic`, `condition`, `fid`) is Herald's and is refused.
///
/// Errors name the path from the block (`fcm.android.ttl`).
public struct FCMMessageOverrides: Sendable, Hashable {
    /// The largest block read.
    public static let maximumSize = 64 * 1024

    /// The validated block, canonical (`snake_case` keys, upper-case enums).
    let json: [String: JSON]

    /// Reads and validates the block's JSON object (`strict`: by the rules of `jobBlockSchema`).
    public init(json bytes: some Collection<UInt8>, strict: Bool = false) throws(FCMMessageError) {
        guard strict || bytes.count <= Self.maximumSize else {
            throw FCMMessageError(.tooLarge, field: "fcm", "is larger than \(Self.maximumSize) bytes")
        }
        let parsed: JSON
        do {
            parsed = try JSON.parse(bytes)
        } catch {
            throw FCMMessageError(.malformedJSON, field: "fcm", "is \(error.description)")
        }
        guard let members = parsed.object else {
            throw FCMMessageError(.malformedJSON, field: "fcm", "is not a JSON object")
        }
        for key in members.keys.sorted() where Shape.targetFields.contains(key) {
            throw FCMMessageError(.unknownField, field: "fcm.\(key)", "is set by Herald (the device's target)")
        }
        guard case .object(let canonical) = try Shape.message.validate(parsed, path: "fcm", strict: strict) else {
            throw FCMMessageError(.malformedJSON, field: "fcm", "is not a JSON object")
        }
        self.json = canonical
    }

    /// Whether the block sets nothing.
    public var isEmpty: Bool { json.isEmpty }
}
