/// The response to one request, and what the request record keeps of it.
struct Answer: Sendable {
    var status: Int
    /// Response headers besides `content-length`.
    var headers: [(name: String, value: String)]
    var body: String
    /// The FCM `errorCode` or OAuth `error`, for the request record and the counts.
    var errorCode: String?
    /// The `Retry-After` seconds sent, if any.
    var retryAfter: Int?

    init(
        status: Int,
        headers: [(name: String, value: String)] = [],
        body: String,
        errorCode: String? = nil,
        retryAfter: Int? = nil
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.errorCode = errorCode
        self.retryAfter = retryAfter
    }

    /// A JSON answer.
    static func json(_ status: Int, _ body: JSONValue, errorCode: String? = nil) -> Answer {
        Answer(
            status: status, headers: [("content-type", "application/json; charset=UTF-8")], body: body.serialized,
            errorCode: errorCode)
    }

    /// An error of the Google API front end in FCM's shape.
    static func google(_ error: GoogleError) -> Answer {
        var answer = json(error.code, error.json, errorCode: error.fcmErrorCode)
        if error.code == 401, error.fcmErrorCode == nil {
            answer.headers.append(("www-authenticate", #"Bearer realm="https://accounts.google.com/""#))
        }
        return answer
    }

    /// An error of the OAuth token endpoint: `{"error": …, "error_description": …}`.
    static func oauth(_ status: Int, error: String, description: String) -> Answer {
        json(status, .object(["error": .string(error), "error_description": .string(description)]), errorCode: error)
    }

    /// The front end's plain answer to a path it does not serve.
    static let notFound = Answer(
        status: 404, headers: [("content-type", "text/html; charset=UTF-8")],
        body: "<!DOCTYPE html>\n<title>Error 404 (Not Found)!!1</title>\n<p><b>404.</b> That’s an error.\n")

    /// The answer to a method other than POST on a served path.
    static let methodNotAllowed = Answer(
        status: 405, headers: [("content-type", "text/html; charset=UTF-8"), ("allow", "POST")],
        body: "<!DOCTYPE html>\n<title>Error 405 (Method Not Allowed)!!1</title>\n<p><b>405.</b> That’s an error.\n")
}
