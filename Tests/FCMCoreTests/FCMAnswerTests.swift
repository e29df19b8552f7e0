import FCMCore
import Testing

@Suite struct FCMAnswerTests {
    static func errorBody(
        code: Int, status: String, message: String, errorCode: String? = nil, violations: [(String, String)] = []
    ) -> [UInt8] {
        var details: [String] = []
        if let errorCode {
            details.append(
                #"{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(errorCode)"}"#)
        }
        if !violations.isEmpty {
            let items = violations.map { #"{"field":"\#($0.0)","description":"\#($0.1)"}"# }
            details.append(
                #"{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[\#(items.joined(separator: ","))]}"#
            )
        }
        let body = #"""
            {"error": {"code": \#(code), "message": "\#(message)", "status": "\#(status)",
                       "details": [\#(details.joined(separator: ","))]}}
            """#
        return Array(body.utf8)
    }

    static let rpcStatus: [Int: String] = [
        400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
    ]

    @Test(arguments: FCMErrorCode.documented)
    func everyDocumentedCodeIsRead(status: Int, code: FCMErrorCode) {
        let answer = FCMAnswer(
            status: status,
            body: Self.errorBody(code: status, status: Self.rpcStatus[status]!, message: "m", errorCode: code.rawValue))
        #expect(answer.errorCode == code)
        #expect(answer.errorCode?.isKnown == true)
        #expect(answer.rpcStatus == Self.rpcStatus[status])
        #expect(answer.reason == code.rawValue)
        #expect(!answer.isSuccess)
        #expect(FCMErrorCode(rawValue: code.rawValue) == code)
    }

    @Test func anUnknownCodeIsKeptAsText() {
        let answer = FCMAnswer(
            status: 400,
            body: Self.errorBody(code: 400, status: "FAILED_PRECONDITION", message: "m", errorCode: "NEW_ONE"))
        #expect(answer.errorCode == .unknown("NEW_ONE"))
        #expect(answer.errorCode?.isKnown == false)
        #expect(answer.reason == "NEW_ONE")
    }

    struct TokenCase: Sendable, CustomTestStringConvertible {
        var name: String
        var body: [UInt8]
        var namesTheToken: Bool
        var testDescription: String { name }
    }

    static let tokenCases: [TokenCase] = [
        TokenCase(
            name: "violation on message.token",
            body: errorBody(
                code: 400, status: "INVALID_ARGUMENT", message: "Invalid registration", errorCode: "INVALID_ARGUMENT",
                violations: [("message.token", "Invalid registration token")]),
            namesTheToken: true),
        TokenCase(
            name: "violation on message.fid",
            body: errorBody(
                code: 400, status: "INVALID_ARGUMENT", message: "Invalid", violations: [("message.fid", "bad")]),
            namesTheToken: true),
        TokenCase(
            name: "the invalid-token message",
            body: errorBody(
                code: 400, status: "INVALID_ARGUMENT",
                message: "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT"),
            namesTheToken: true),
        TokenCase(
            name: "a payload violation",
            body: errorBody(
                code: 400, status: "INVALID_ARGUMENT",
                message: "Invalid value at 'message.data[0].value' (TYPE_STRING), 1", errorCode: "INVALID_ARGUMENT",
                violations: [("message.data[0].value", "Invalid value at 'message.data[0].value' (TYPE_STRING), 1")]),
            namesTheToken: false),
        TokenCase(
            name: "a bare INVALID_ARGUMENT",
            body: errorBody(code: 400, status: "INVALID_ARGUMENT", message: "Request contains an invalid argument."),
            namesTheToken: false),
        TokenCase(
            name: "UNREGISTERED (pruned by its code, not by this flag)",
            body: errorBody(
                code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED"),
            namesTheToken: false),
    ]

    @Test(arguments: tokenCases)
    func onlyATokenSpecificVerdictNamesTheToken(_ test: TokenCase) {
        #expect(FCMAnswer(status: 400, body: test.body).namesTheToken == test.namesTheToken)
    }

    @Test func anAnswerWithoutFCMCodeFallsBackToTheStatusThenTheHTTPCode() {
        let unauthenticated = FCMAnswer(
            status: 401,
            body: Self.errorBody(code: 401, status: "UNAUTHENTICATED", message: "Request had invalid authentication"))
        #expect(unauthenticated.errorCode == nil)
        #expect(unauthenticated.rpcStatus == "UNAUTHENTICATED")
        #expect(unauthenticated.reason == "UNAUTHENTICATED")
        #expect(FCMAnswer(status: 502, body: Array("<html>Bad Gateway</html>".utf8)).reason == "HTTP502")
    }

    @Test(arguments: ["", "{", "[]", #"{"error":"x"}"#, #"{"error":{"details":{}}}"#])
    func malformedBodiesGiveNoCode(body: String) {
        let answer = FCMAnswer(status: 500, body: Array(body.utf8))
        #expect(answer.status == 500)
        #expect(answer.errorCode == nil)
        #expect(answer.reason == "HTTP500" || answer.rpcStatus != nil)
    }

    @Test func anOversizedBodyIsNotRead() {
        var body = Self.errorBody(code: 404, status: "NOT_FOUND", message: "m", errorCode: "UNREGISTERED")
        body += Array(repeating: UInt8(ascii: " "), count: FCMAnswer.maximumBodySize)
        let answer = FCMAnswer(status: 404, body: body)
        #expect(answer.errorCode == nil)
        #expect(answer.reason == "HTTP404")
    }

    @Test func successGivesTheMessageName() {
        let answer = FCMAnswer(status: 200, body: Array(#"{"name":"projects/p/messages/0:1700000000%abc"}"#.utf8))
        #expect(answer.isSuccess)
        #expect(answer.messageName == "projects/p/messages/0:1700000000%abc")
    }

    @Test func aTokenEchoedInTheMessageIsRedacted() {
        let token = "dGVzdA:APA91bHPRgkF3JUikC4ENAHEeMrd41Zxv3hVZjC9KtT8OvPVGJ"
        let answer = FCMAnswer(
            status: 400,
            body: Self.errorBody(
                code: 400, status: "INVALID_ARGUMENT", message: "Invalid registration token '\(token)'"))
        #expect(answer.message == "Invalid registration token '<redacted>'")
    }
}
