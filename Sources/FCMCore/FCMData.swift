/// `message.data`: string keys to string values, as FCM requires (a number is a 400).
///
/// `init(stringifying:)` turns a job's custom data, whose values may be any JSON, into this form: strings stay as
/// they are; numbers, booleans, null, objects and arrays become their compact JSON text (numbers exactly as
/// written, object keys sorted). The app parses them back.
public struct FCMData: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// The largest custom-data document read.
    public static let maximumInputSize = 64 * 1024

    /// The entries, as sent.
    public var values: [String: String]

    /// Wraps string entries as they are.
    public init(_ values: [String: String] = [:]) {
        self.values = values
    }

    /// Entries from a literal; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }

    /// Stringifies a JSON object of custom data. Reserved keys are refused when the message is built.
    public init(stringifying json: some Collection<UInt8>) throws(FCMMessageError) {
        guard json.count <= Self.maximumInputSize else {
            throw FCMMessageError(.tooLarge, field: "data", "is larger than \(Self.maximumInputSize) bytes")
        }
        let parsed: JSON
        do {
            parsed = try JSON.parse(json)
        } catch {
            throw FCMMessageError(.malformedJSON, field: "data", "is \(error.description)")
        }
        guard let members = parsed.object else {
            throw FCMMessageError(.malformedJSON, field: "data", "is not a JSON object")
        }
        self.values = members.mapValues { $0.string ?? $0.compactText }
    }

    /// The value for `key`.
    public subscript(key: String) -> String? {
        get { values[key] }
        set { values[key] = newValue }
    }

    var json: JSON { .object(values.mapValues(JSON.string)) }
}
