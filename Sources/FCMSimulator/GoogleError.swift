/// An error body of Google's API front end:
/// `{"error":{"code","message","status","details":[FcmError?, BadRequest?]}}`.
struct GoogleError: Sendable, Hashable, Error {
    /// One entry of `google.rpc.BadRequest.fieldViolations`.
    struct FieldViolation: Sendable, Hashable {
        /// The field path, e.g. `message.data[0].value`; nil for a violation of the request as a whole.
        var field: String?
        var description: String
    }

    var code: Int
    var message: String
    var status: String
    /// `google.firebase.fcm.v1.FcmError.errorCode`; nil for errors without that detail (401 UNAUTHENTICATED, JSON and
    /// type errors).
    var fcmErrorCode: String?
    var fieldViolations: [FieldViolation] = []

    /// The JSON body.
    var json: JSONValue {
        var details: [JSONValue] = []
        if let fcmErrorCode {
            details.append(
                .object([
                    "@type": .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"),
                    "errorCode": .string(fcmErrorCode),
                ]))
        }
        if !fieldViolations.isEmpty {
            let violations = fieldViolations.map { violation -> JSONValue in
                var members: [JSONValue.Member] = []
                if let field = violation.field { members.append(.init(key: "field", value: .string(field))) }
                members.append(.init(key: "description", value: .string(violation.description)))
                return .object(members)
            }
            details.append(
                .object([
                    "@type": .string("type.googleapis.com/google.rpc.BadRequest"),
                    "fieldViolations": .array(violations),
                ]))
        }
        var error: [JSONValue.Member] = [
            .init(key: "code", value: .number(String(code))), .init(key: "message", value: .string(message)),
            .init(key: "status", value: .string(status)),
        ]
        if !details.isEmpty { error.append(.init(key: "details", value: .array(details))) }
        return .object(["error": .object(error)])
    }

    /// 400 INVALID_ARGUMENT for a JSON or type error: a BadRequest detail only.
    static func invalidJSON(_ message: String, field: String?) -> GoogleError {
        GoogleError(
            code: 400, message: message, status: "INVALID_ARGUMENT",
            fieldViolations: [FieldViolation(field: field, description: message)])
    }

    /// 400 INVALID_ARGUMENT with FcmError INVALID_ARGUMENT and a field violation.
    static func invalidArgument(_ message: String, field: String, description: String? = nil) -> GoogleError {
        GoogleError(
            code: 400, message: message, status: "INVALID_ARGUMENT", fcmErrorCode: "INVALID_ARGUMENT",
            fieldViolations: [FieldViolation(field: field, description: description ?? message)])
    }

    /// 401 UNAUTHENTICATED: the access token is missing, unknown or expired. No FcmError detail.
    static let unauthenticated = GoogleError(
        code: 401,
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
            + "other valid authentication credential. "
            + "See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        status: "UNAUTHENTICATED")

    /// 403 PERMISSION_DENIED: the access token's account does not belong to the project in the path.
    static func permissionDenied(project: String) -> GoogleError {
        GoogleError(
            code: 403,
            message: "Permission 'cloudmessaging.messages.create' denied on resource "
                + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).",
            status: "PERMISSION_DENIED")
    }

    /// 404 UNREGISTERED.
    static let unregistered = GoogleError(
        code: 404, message: "Requested entity was not found.", status: "NOT_FOUND", fcmErrorCode: "UNREGISTERED")

    /// 403 SENDER_ID_MISMATCH.
    static let senderIDMismatch = GoogleError(
        code: 403, message: "SenderId mismatch", status: "PERMISSION_DENIED", fcmErrorCode: "SENDER_ID_MISMATCH")

    /// 401 THIRD_PARTY_AUTH_ERROR.
    static let thirdPartyAuthError = GoogleError(
        code: 401, message: "Auth error from APNS or Web Push Service", status: "UNAUTHENTICATED",
        fcmErrorCode: "THIRD_PARTY_AUTH_ERROR")

    /// The answer of an injected failure with `status`.
    static func injected(status: Int) -> GoogleError {
        switch status {
        case 429:
            GoogleError(
                code: 429,
                message: "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute' "
                    + "of service 'fcm.googleapis.com'.",
                status: "RESOURCE_EXHAUSTED", fcmErrorCode: "QUOTA_EXCEEDED")
        case 500:
            GoogleError(code: 500, message: "Internal error encountered.", status: "INTERNAL", fcmErrorCode: "INTERNAL")
        case 503:
            GoogleError(
                code: 503, message: "The service is currently unavailable.", status: "UNAVAILABLE",
                fcmErrorCode: "UNAVAILABLE")
        default:
            GoogleError(code: status, message: "Unknown error.", status: "UNKNOWN", fcmErrorCode: "UNSPECIFIED_ERROR")
        }
    }
}
