import Crypto
import Foundation

/// Identity tokens: an app's backend's proof that a device may be bound to a user id or an activity id, which a
/// register-only key (the one embedded in the app) must show to bind one (docs/api.md, "Identity tokens").
///
/// `v1.<expiry>.<signature>`: `expiry` is the token's end in Unix seconds (decimal), and `signature` the base64url
/// (no padding) HMAC-SHA256, with the app's identity secret, of
/// `herald-identity-v1\n<app>\n<kind>\n<subject>\n<device token>\n<expiry>`, where `kind` is `user` or `activity`,
/// `subject` the user id or activity id, and `device token` the lowercase hex token of the device. None of the
/// fields can hold a newline (the API refuses control characters), so the message is unambiguous.
public enum IdentityToken {
    /// What a token binds a device to.
    public enum Subject: Sendable, Hashable {
        /// A user id (`user_id` of a device registration).
        case user(String)
        /// A Live Activity id (an update token's `activity_id`).
        case activity(String)

        var kind: String {
            switch self {
            case .user: "user"
            case .activity: "activity"
            }
        }

        var value: String {
            switch self {
            case .user(let id), .activity(let id): id
            }
        }
    }

    /// The longest a token may be valid for, from now: a week. A token further ahead is refused, so that a leaked
    /// token does not last.
    public static let longestLifetime: Int64 = 7 * 86_400

    /// The longest token text read: the version, 12 digits and a 43-character signature fit with room to spare.
    static let maximumLength = 128

    /// Why a token was refused: a sentence that names the rule, never the token or the secret.
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The signed message of a token.
    static func message(app: String, subject: Subject, device: String, expiry: Int64) -> [UInt8] {
        Array("herald-identity-v1\n\(app)\n\(subject.kind)\n\(subject.value)\n\(device)\n\(expiry)".utf8)
    }

    /// A token for `device` (lowercase hex) and `subject`, valid until `expiry` (Unix seconds): what a backend
    /// written in Swift issues (docs/api.md has the same in other languages).
    public static func mint(secret: [UInt8], app: String, subject: Subject, device: String, expiry: Int64) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: message(app: app, subject: subject, device: device, expiry: expiry), using: SymmetricKey(data: secret))
        return "v1.\(expiry).\(base64URL(Array(mac)))"
    }

    /// Checks `token` for `device` (lowercase hex) and `subject` at `now` (Unix seconds): well formed, not expired,
    /// not valid further ahead than ``longestLifetime``, and signed with `secret` (compared in constant time).
    public static func verify(
        _ token: String, secret: [UInt8], app: String, subject: Subject, device: String, now: Int64
    ) throws(Refusal) {
        let parts =
            token.utf8.count <= maximumLength ? token.split(separator: ".", omittingEmptySubsequences: false) : []
        guard parts.count == 3, parts[0] == "v1", (1...12).contains(parts[1].utf8.count),
            parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let expiry = Int64(parts[1]), let signature = base64URLDecode(parts[2]), signature.count == 32
        else {
            throw Refusal(message: "identity_token is malformed: expected v1.<expiry>.<signature> (docs/api.md)")
        }
        guard expiry > now else { throw Refusal(message: "identity_token has expired: ask your backend for a new one") }
        guard expiry - now <= longestLifetime else {
            throw Refusal(message: "identity_token is valid for more than 7 days ahead: its expiry is refused")
        }
        let valid = HMAC<SHA256>.isValidAuthenticationCode(
            signature, authenticating: message(app: app, subject: subject, device: device, expiry: expiry),
            using: SymmetricKey(data: secret))
        guard valid else {
            throw Refusal(
                message: "identity_token was not signed for this app, \(subject.kind) and device token"
                    + " with the app's identity secret")
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 < 0x80 && ($0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || isAlnum($0)) })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }

    private static func isAlnum(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// An app's identity-token policy as the API applies it: its secret (never logged or printed) and whether a
/// register-only key needs a token to bind.
public struct AppIdentity: Sendable, CustomStringConvertible {
    /// The HMAC secret; nil when the app names none (no token can be checked).
    public var secret: [UInt8]?
    /// Whether a register-only key needs a token to bind a device to a user or an activity.
    public var required: Bool

    public init(secret: [UInt8]?, required: Bool = true) {
        self.secret = secret
        self.required = required
    }

    /// Without the secret.
    public var description: String { "AppIdentity(secret: \(secret == nil ? "none" : "set"), required: \(required))" }
}
