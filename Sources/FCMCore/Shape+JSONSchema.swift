/// The shapes as JSON Schema (draft 2020-12, with Herald's `x-herald-max-utf8-bytes`): what
/// `schemas/job.schema.json` says of a job's `fcm` block, generated here so that the published contract and the
/// strict validation (`FCMMessageOverrides(jobBlock:)`) cannot drift apart — a test compares the two.
extension Shape {
    /// The pattern of a strict duration: `0` or digits without a leading zero, up to 28 days (2,419,200 s), with an
    /// optional fraction of one to nine digits (none but zeros at the maximum), then `s`.
    static let durationPattern =
        "^((0|[1-9][0-9]{0,5}|1[0-9]{6}|2[0-3][0-9]{5}|240[0-9]{4}|241[0-8][0-9]{3}|2419[01][0-9]{2})"
        + "(\\\\.[0-9]{1,9})?|2419200(\\\\.0{1,9})?)s$"

    /// An https URL as `Validation.isHTTPSURL` reads it: printable ASCII without space, `"` or `\\`, a host without
    /// `@`.
    static let httpsURLPattern = "^https://[!$-.0-9:->A-\\\\[\\\\]-~]+([/?#][!#-\\\\[\\\\]-~]*)?$"

    /// The JSON text of the schema for this shape, keys sorted.
    var jsonSchemaText: String {
        switch self {
        case .string: return #"{"type":"string"}"#
        case .url: return #"{"pattern":"^https?://","type":"string","x-herald-max-utf8-bytes":2048}"#
        case .httpsURL:
            return #"{"pattern":""# + Self.httpsURLPattern + #"","type":"string","x-herald-max-utf8-bytes":2048}"#
        case .color: return #"{"pattern":"^#[0-9a-fA-F]{6}$","type":"string"}"#
        case .label: return #"{"pattern":"^[a-zA-Z0-9_.~%-]{1,50}$","type":"string"}"#
        case .duration: return #"{"pattern":""# + Self.durationPattern + #"","type":"string"}"#
        case .bool: return #"{"type":"boolean"}"#
        case .integer(let range):
            return #"{"maximum":\#(range.upperBound),"minimum":\#(range.lowerBound),"type":"integer"}"#
        case .fraction(let range):
            return #"{"maximum":\#(Int(range.upperBound)),"minimum":\#(Int(range.lowerBound)),"type":"number"}"#
        case .enumeration(let values):
            return #"{"enum":["# + values.map { "\"\($0)\"" }.joined(separator: ",") + #"],"type":"string"}"#
        case .array(let element):
            return #"{"items":"# + element.jsonSchemaText + #","type":"array"}"#
        case .dataMap:
            // Reserved keys compared without case: from, message_type, and any starting with google or gcm.
            return #"{"additionalProperties":{"type":"string"},"propertyNames":{"allOf":["#
                + #"{"not":{"pattern":"^([Ff][Rr][Oo][Mm]|[Mm][Ee][Ss][Ss][Aa][Gg][Ee]_[Tt][Yy][Pp][Ee])$"}},"#
                + #"{"not":{"pattern":"^([Gg][Oo][Oo][Gg][Ll][Ee]|[Gg][Cc][Mm])"}}],"minLength":1},"type":"object"}"#
        case .stringMap: return #"{"additionalProperties":{"type":"string"},"type":"object"}"#
        case .anyObject: return #"{"type":"object"}"#
        case .object(let fields, let required):
            let properties = fields.keys.sorted().map { "\"\($0)\":\(fields[$0]!.jsonSchemaText)" }
            let requiredText =
                required.isEmpty
                ? "" : #","required":["# + required.sorted().map { "\"\($0)\"" }.joined(separator: ",") + "]"
            return #"{"additionalProperties":false,"properties":{"# + properties.joined(separator: ",") + "}"
                + requiredText + #","type":"object"}"#
        }
    }
}

extension FCMMessageOverrides {
    /// JSON Schema of a job's `fcm` block, keys sorted: `schemas/job.schema.json` holds it as `$defs/fcm`.
    public static var jobBlockSchema: String { Shape.message.jsonSchemaText }

    /// Reads a job's `fcm` block (already parsed from the job, re-encoded), by the strict rules its JSON Schema
    /// states: `snake_case` field names, FCM's upper-case enumerations, durations without leading zeros. The
    /// target fields are Herald's and refused.
    public init(jobBlock bytes: some Collection<UInt8>) throws(FCMMessageError) {
        try self.init(json: bytes, strict: true)
    }
}
