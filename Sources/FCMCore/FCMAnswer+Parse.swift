extension FCMAnswer {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    /// Reads an answer from its status and body (JSON: `{"name"}` on success, `{"error":{…}}` otherwise).
    public init(status: Int, body: some Collection<UInt8>) {
        self.init(status: status)
        guard !body.isEmpty, body.count <= Self.maximumBodySize, let root = (try? JSON.parse(body))?.object else {
            return
        }
        if status == 200 {
            // The name is not a secret (a path and an id); it is kept only if it is short printable ASCII.
            messageName = root["name"]?.string.flatMap { name in
                name.utf8.count <= 256 && name.utf8.allSatisfy(Validation.isPlainPrintable) ? name : nil
            }
            return
        }
        guard let error = root["error"]?.object else { return }
        rpcStatus = error["status"]?.string.map { Validation.safeText($0, maximumLength: 64) }
        message = error["message"]?.string.map { Validation.safeText($0) }
        guard case .array(let details)? = error["details"] else { return }
        for detail in details.prefix(Self.maximumFieldViolations) {
            guard let members = detail.object else { continue }
            switch members["@type"]?.string {
            case Self.fcmErrorType?:
                if let code = members["errorCode"]?.string {
                    errorCode = FCMErrorCode(rawValue: Validation.safeText(code, maximumLength: 64))
                }
            case Self.badRequestType?:
                guard case .array(let violations)? = members["fieldViolations"] else { continue }
                for violation in violations {
                    guard fieldViolations.count < Self.maximumFieldViolations, let item = violation.object,
                        let field = item["field"]?.string
                    else { continue }
                    fieldViolations.append(
                        FieldViolation(
                            field: Validation.safeText(field, maximumLength: 128),
                            description: Validation.safeText(item["description"]?.string ?? "")))
                }
            default:
                continue
            }
        }
    }
}
