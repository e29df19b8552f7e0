/// The recipient of a message: exactly one of FCM's `token`, `topic`, `condition` or `fid`.
public enum FCMSimulatorTarget: Sendable, Hashable, Codable {
    /// A registration token.
    case token(String)
    /// A topic name, without `/topics/`.
    case topic(String)
    /// A condition over topics.
    case condition(String)
    /// A Firebase Installation ID.
    case fid(String)

    /// The field name in the Message resource: `token`, `topic`, `condition` or `fid`.
    public var field: String {
        switch self {
        case .token: "token"
        case .topic: "topic"
        case .condition: "condition"
        case .fid: "fid"
        }
    }

    /// The value as sent.
    public var value: String {
        switch self {
        case .token(let value), .topic(let value), .condition(let value), .fid(let value): value
        }
    }

    /// The value a token fate (dead, foreign, third-party, injected failure prefix) applies to: the registration
    /// token or the FID; nil for topics and conditions.
    var deviceValue: String? {
        switch self {
        case .token(let value), .fid(let value): value
        case .topic, .condition: nil
        }
    }
}
