import APNSCore

/// Any JSON value: the `aps` dictionary and custom keys are passed through as the producer wrote them.
///
/// The same type as APNSCore's payload values, so that a job's notification and a typed payload never need
/// converting.
public typealias JSONValue = PayloadValue

extension PayloadValue {
    /// The dictionary, if this is an object.
    public var objectValue: [String: PayloadValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The integer, if this is a whole number.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value.rounded() == value: Int64(exactly: value)
        default: nil
        }
    }
}
