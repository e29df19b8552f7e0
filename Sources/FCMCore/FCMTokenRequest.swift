/// The request that exchanges an assertion for an access token: `POST <token_uri>` with a form body.
///
/// Its `description` names the endpoint only; the body holds the assertion, a credential for an hour.
public struct FCMTokenRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The grant type of RFC 7523.
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// The `Content-Type` of the body.
    public static let contentType = "application/x-www-form-urlencoded"

    /// Where to post: the account's `token_uri`.
    public let url: String
    /// `grant_type=…&assertion=…`, form-encoded.
    public let body: [UInt8]

    /// Builds the request for `assertion` (from `FCMAssertionSigner`) to `account`'s token endpoint.
    public init(account: FCMServiceAccount, assertion: String) {
        self.url = account.tokenURI
        var body = Array("grant_type=".utf8)
        Self.formEncode(Self.grantType, into: &body)
        body.append(contentsOf: "&assertion=".utf8)
        Self.formEncode(assertion, into: &body)
        self.body = body
    }

    /// `application/x-www-form-urlencoded`: unreserved characters as they are, everything else as `%XX`. A JWT is
    /// entirely unreserved, so this is a copy for it.
    static func formEncode(_ text: String, into out: inout [UInt8]) {
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if Validation.isAlphanumeric(byte) || "-._~".utf8.contains(byte) {
                out.append(byte)
            } else {
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
    }

    public var description: String { "FCMTokenRequest(POST \(url))" }
    public var debugDescription: String { description }
}
