import Foundation

/// A push service's answer to one message, as a value: status, a short reason from the body, `Retry-After` in
/// seconds, and what kind of answer it is (what the sender should do).
///
/// The reason never holds an endpoint: URL paths in the body's text are cut to their origin.
public struct WebPushAnswer: Sendable, Hashable {
    /// What an answer means for the sender.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// 2xx (201 Created from every big service): accepted, not proof of delivery.
        case accepted
        /// 404 or 410: the subscription is gone; prune it.
        case gone
        /// 413: the body is too large; never retried as it is.
        case payloadTooLarge
        /// 429, or WNS's 406 with `Retry-After`: wait (honouring `Retry-After`) and retry.
        case rateLimited
        /// 500, 502, 503, 504: service trouble; retry with backoff (honouring `Retry-After` when given).
        case unavailable
        /// 400: a bad header or body; never retried unchanged, the subscription is kept.
        case badRequest
        /// 401, 403: the VAPID key or subject is refused; the job stops, nothing is pruned.
        case credentials
        /// Any other 4xx: never retried.
        case otherClientError
        /// Any other status (other 5xx, and 1xx/3xx, which a push service does not send): retried with backoff.
        case otherServerError
    }

    /// The HTTP status.
    public let status: Int
    /// A reason for logs and reports, at most 200 characters: Apple's `reason`, Mozilla's `errno n: message`, or the
    /// start of the body's text; nil for an empty body or an accepted message.
    public let reason: String?
    /// Seconds to wait from `Retry-After` (delta-seconds, or an HTTP-date taken relative to `now`), in `0...86400`;
    /// nil when absent or unreadable.
    public let retryAfter: Int64?
    /// What kind of answer this is.
    public let kind: Kind

    /// The longest reason kept.
    public static let maximumReasonLength = 200
    /// The longest `Retry-After` honoured: a day.
    public static let maximumRetryAfter: Int64 = 86400

    /// Classifies an answer.
    ///
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - retryAfter: the `Retry-After` header's value, if any.
    ///   - body: the answer's body (only read when the message was not accepted).
    ///   - now: the current time in seconds since 1970, for an HTTP-date `Retry-After`.
    public init(status: Int, retryAfter: String?, body: [UInt8], now: Int64) {
        self.status = status
        self.retryAfter = retryAfter.flatMap { Self.seconds(retryAfter: $0, now: now) }
        self.kind = Self.kind(status: status, hasRetryAfter: self.retryAfter != nil)
        self.reason = kind == .accepted ? nil : Self.reason(body)
    }

    static func kind(status: Int, hasRetryAfter: Bool) -> Kind {
        switch status {
        case 200..<300: .accepted
        case 404, 410: .gone
        case 413: .payloadTooLarge
        case 429: .rateLimited
        case 406 where hasRetryAfter: .rateLimited
        case 500, 502, 503, 504: .unavailable
        case 400: .badRequest
        case 401, 403: .credentials
        case 400..<500: .otherClientError
        default: .otherServerError
        }
    }

    /// `Retry-After` in seconds from `now`, bounded to `0...maximumRetryAfter`; nil when it is neither form.
    package static func seconds(retryAfter: String, now: Int64) -> Int64? {
        let text = retryAfter.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // More digits than an Int64 holds is still "a long time".
            return min(Int64(text) ?? maximumRetryAfter, maximumRetryAfter)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        return min(max(date - now, 0), maximumRetryAfter)
    }

    /// The reason in a body: Apple's `{"reason":"…"}`, Mozilla's `{"errno":n,"message":"…"}`, else its text.
    package static func reason(_ body: [UInt8]) -> String? {
        let text: String
        if body.count <= 8192, body.first == UInt8(ascii: "{"),
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        {
            if let reason = object["reason"] as? String {
                text = reason
            } else if let errno = object["errno"] as? Int {
                let message = (object["message"] as? String) ?? (object["error"] as? String) ?? ""
                text = message.isEmpty ? "errno \(errno)" : "errno \(errno): \(message)"
            } else {
                text = String(decoding: body.prefix(4 * maximumReasonLength), as: UTF8.self)
            }
        } else {
            text = String(decoding: body.prefix(4 * maximumReasonLength), as: UTF8.self)
        }
        let cleaned = withoutURLPaths(
            String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        )
        .trimmingCharacters(in: .whitespaces)
        return cleaned.isEmpty ? nil : String(cleaned.prefix(maximumReasonLength))
    }

    /// `text` with every `http(s)://host/path…` cut to `http(s)://host/…`, so that an echoed endpoint (a capability
    /// URL) never reaches a log or a report.
    package static func withoutURLPaths(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let scheme = rest.range(of: "://") {
            result += rest[rest.startIndex..<scheme.upperBound]
            let afterScheme = rest[scheme.upperBound...]
            let stop: (Character) -> Bool = { $0 == " " || $0 == "\"" || $0 == "'" || $0 == "<" || $0 == ">" }
            let urlEnd = afterScheme.firstIndex(where: stop) ?? afterScheme.endIndex
            let url = afterScheme[afterScheme.startIndex..<urlEnd]
            if let pathStart = url.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
                result += url[url.startIndex..<pathStart] + "/…"
            } else {
                result += url
            }
            rest = afterScheme[urlEnd...]
        }
        return result + rest
    }
}
