/// A value in an AMQP field table (message headers, queue arguments).
///
/// Integers of every width arrive as `.int`, floats and doubles as `.double`, timestamps as `.int` seconds,
/// and long strings and byte arrays as `.string`; `void` entries are dropped.
public enum AMQPFieldValue: Sendable, Hashable {
    /// A long string (sent as UTF-8 `S`).
    case string(String)
    /// A signed integer (sent as 64-bit `l`).
    case int(Int64)
    /// A boolean (`t`).
    case bool(Bool)
    /// A floating-point number (sent as 64-bit `d`).
    case double(Double)
    /// A nested field table (`F`).
    case table([String: AMQPFieldValue])
    /// A field array (`A`).
    case array([AMQPFieldValue])
}

/// An AMQP field table: message headers or queue, exchange and consumer arguments.
public typealias AMQPTable = [String: AMQPFieldValue]

extension AMQPFieldValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension AMQPFieldValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension AMQPFieldValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension AMQPFieldValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension AMQPFieldValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: AMQPFieldValue...) { self = .array(elements) }
}

extension AMQPFieldValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, AMQPFieldValue)...) {
        self = .table(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
