import Testing

/// A body FCM refuses, with its exact answer.
struct InvalidMessage: Sendable, CustomTestStringConvertible {
    var name: String
    var body: String
    var status = 400
    var expected: String

    var testDescription: String { name }

    static let token = SimulatorFixture.registrationToken

    /// A BadRequest-only answer (JSON and type errors).
    static func badRequest(_ message: String, field: String?) -> String {
        let fieldMember = field.map { #""field":"\#($0)","# } ?? ""
        return #"{"error":{"code":400,"message":"\#(message)","status":"INVALID_ARGUMENT","details":["#
            + #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":"#
            + #"[{\#(fieldMember)"description":"\#(message)"}]}]}}"#
    }

    /// An answer with FcmError INVALID_ARGUMENT and a field violation.
    static func invalidArgument(_ message: String, field: String, description: String? = nil) -> String {
        #"{"error":{"code":400,"message":"\#(message)","status":"INVALID_ARGUMENT","details":["#
            + #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"},"#
            + #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":"#
            + #"[{"field":"\#(field)","description":"\#(description ?? message)"}]}]}}"#
    }

    static let all: [InvalidMessage] = [
        InvalidMessage(
            name: "no recipient", body: #"{"message":{"data":{"k":"v"}}}"#,
            expected: invalidArgument("Recipient of the message is not set.", field: "message")),
        InvalidMessage(
            name: "two recipients", body: #"{"message":{"token":"\#(token)","topic":"news"}}"#,
            expected: badRequest(
                "Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set 'topic'",
                field: "message")),
        InvalidMessage(
            name: "a number in data", body: #"{"message":{"token":"\#(token)","data":{"a":"x","count":1}}}"#,
            expected: badRequest(
                "Invalid value at 'message.data[1].value' (TYPE_STRING), 1", field: "message.data[1].value")),
        InvalidMessage(
            name: "a reserved data key", body: #"{"message":{"token":"\#(token)","data":{"from":"me"}}}"#,
            expected: invalidArgument("Invalid data payload key: from", field: "message.data")),
        InvalidMessage(
            name: "a google data key", body: #"{"message":{"token":"\#(token)","android":{"data":{"google.x":"1"}}}}"#,
            expected: invalidArgument("Invalid data payload key: google.x", field: "message.android.data")),
        InvalidMessage(
            name: "an unknown priority", body: #"{"message":{"token":"\#(token)","android":{"priority":"urgent"}}}"#,
            expected: badRequest(
                #"Invalid value at 'message.android.priority' "#
                    + #"(type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), \"urgent\""#,
                field: "message.android.priority")),
        InvalidMessage(
            name: "a TTL that is not a duration", body: #"{"message":{"token":"\#(token)","android":{"ttl":"1h"}}}"#,
            expected: badRequest(
                "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "
                    + "Illegal duration format; duration must end with 's'",
                field: "message.android.ttl")),
        InvalidMessage(
            name: "a TTL over 28 days", body: #"{"message":{"token":"\#(token)","android":{"ttl":"2419201s"}}}"#,
            expected: invalidArgument("TTL must be between 0 and 2419200 seconds", field: "message.android.ttl")),
        InvalidMessage(
            name: "a collapse key that is not a string",
            body: #"{"message":{"token":"\#(token)","android":{"collapse_key":7}}}"#,
            expected: badRequest(
                "Invalid value at 'message.android.collapse_key' (TYPE_STRING), 7",
                field: "message.android.collapse_key")),
        InvalidMessage(
            name: "an unknown request field", body: #"{"message":{"token":"\#(token)"},"dry_run":true}"#,
            expected: badRequest(
                #"Invalid JSON payload received. Unknown name \"dry_run\": Cannot find field."#, field: nil)),
        InvalidMessage(
            name: "an unknown message field", body: #"{"message":{"token":"\#(token)","priority":"high"}}"#,
            expected: badRequest(
                #"Invalid JSON payload received. Unknown name \"priority\" at 'message': Cannot find field."#,
                field: "message")),
        InvalidMessage(
            name: "an unknown notification field",
            body: #"{"message":{"token":"\#(token)","notification":{"title":"t","sound":"x"}}}"#,
            expected: badRequest(
                #"Invalid JSON payload received. Unknown name \"sound\" at 'message.notification': Cannot find field."#,
                field: "message.notification")),
        InvalidMessage(
            name: "an unknown Android notification field",
            body: #"{"message":{"token":"\#(token)","android":{"notification":{"badge":1}}}}"#,
            expected: badRequest(
                #"Invalid JSON payload received. Unknown name \"badge\" at 'message.android.notification': "#
                    + "Cannot find field.",
                field: "message.android.notification")),
        InvalidMessage(
            name: "a token with a bad character", body: #"{"message":{"token":"\#(token)!"}}"#,
            expected: invalidArgument(
                "The registration token is not a valid FCM registration token", field: "message.token",
                description: "Invalid registration token")),
        InvalidMessage(
            name: "a token too short", body: #"{"message":{"token":"abc"}}"#,
            expected: invalidArgument(
                "The registration token is not a valid FCM registration token", field: "message.token",
                description: "Invalid registration token")),
        InvalidMessage(
            name: "an FID of the wrong length", body: #"{"message":{"fid":"abc"}}"#,
            expected: invalidArgument(
                "The Firebase Installation ID is not a valid FID", field: "message.fid", description: "Invalid FID")),
        InvalidMessage(
            name: "a payload over 4096 bytes",
            body: #"{"message":{"token":"\#(token)","data":{"k":"\#(String(repeating: "x", count: 4096))"}}}"#,
            expected: invalidArgument("Message too big", field: "message")),
        InvalidMessage(
            name: "a topic payload over 2048 bytes",
            body: #"{"message":{"topic":"news","data":{"k":"\#(String(repeating: "x", count: 2048))"}}}"#,
            expected: invalidArgument("Message too big", field: "message")),
        InvalidMessage(
            name: "a body that is not JSON", body: #"{"message":"#,
            expected: badRequest("Invalid JSON payload received. Unexpected token.", field: nil)),
        InvalidMessage(
            name: "validate_only that is not a bool", body: #"{"message":{"token":"\#(token)"},"validate_only":"yes"}"#,
            expected: badRequest(#"Invalid value at 'validate_only' (TYPE_BOOL), \"yes\""#, field: "validate_only")),
    ]
}
