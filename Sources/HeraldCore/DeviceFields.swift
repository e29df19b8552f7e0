import APNSCore
import FCMCore

/// The rules for a device's fields wherever they come from: `POST /v1/apps/{app}/devices`, the Live Activity token
/// routes and `herald devices import` (issue 33: "the API validates what the CLI validates"), stated in
/// `schemas/openapi.yaml`. Each check returns the sentence naming the rule, never the value.
public enum DeviceFields {
    /// What a token is, for its length rule.
    public enum TokenKind: String, Sendable, CaseIterable {
        /// A device's APNs token (devices, the device in a Live Activity route).
        case device = "device token"
        /// An ActivityKit push-to-start token.
        case pushToStart = "push-to-start token"
        /// An ActivityKit update token.
        case update = "update token"

        /// The shortest token of this kind accepted. Apple says not to assume a length, but every token it issues
        /// is at least 32 bytes (device tokens are 32; ActivityKit's are longer): an 8-hex-digit "token" is a typo
        /// or a fake, and would only be answered BadDeviceToken.
        public var minimumBytes: Int { 32 }
        /// The longest: 200 bytes (`DeviceToken`'s limit, and the column's).
        public var maximumBytes: Int { 200 }
    }

    /// Parses a token of `kind`: hexadecimal (any case, spaces, tabs and the `<…>` form), 32 to 200 bytes.
    public static func token(_ text: String, kind: TokenKind) throws(JobError) -> DeviceToken {
        let token: DeviceToken
        do {
            token = try DeviceToken(parsing: text)
        } catch {
            let sentence = error.description.replacingOccurrences(of: "device token", with: kind.rawValue)
            throw JobError(.invalidTarget, sentence)
        }
        let bytes = token.hex.utf8.count / 2
        guard bytes >= kind.minimumBytes else {
            throw JobError(
                .invalidTarget,
                "\(kind.rawValue) is \(bytes) bytes; a \(kind.rawValue) is \(kind.minimumBytes) to "
                    + "\(kind.maximumBytes) bytes (\(kind.minimumBytes * 2) to \(kind.maximumBytes * 2) hex digits)")
        }
        return token
    }

    /// Parses a device's token by the rules of its platform: an iOS token as `token(_:kind:)` reads a device token
    /// (32 to 200 bytes of hex, normalised to lowercase); an Android one as an FCM registration token (20 to 4096
    /// characters of `A-Z a-z 0-9 _ : -`) or, with `fcmKind` `.fid`, a Firebase Installation ID (22 characters of
    /// `A-Z a-z 0-9 _ -`, the first one of `c d e f`), kept exactly as given. The sentence names the rule, never
    /// the token.
    public static func token(_ text: String, platform: DevicePlatform, fcmKind: FCMTarget.Kind? = nil)
        throws(JobError) -> DeviceToken
    {
        switch platform {
        case .ios:
            return try token(text, kind: .device)
        case .android:
            do {
                return try DeviceAddress(platform: .android, text: text, fid: fcmKind == .fid).token
            } catch {
                let rule =
                    fcmKind == .fid
                    ? "an installation id (fcm_kind fid) is \(FCMTarget.fidLength) characters of A-Z a-z 0-9 _ -, the"
                        + " first one of c, d, e or f"
                    : "an Android registration token is \(FCMTarget.tokenLengths.lowerBound) to"
                        + " \(FCMTarget.tokenLengths.upperBound) characters of A-Z a-z 0-9 _ : -"
                throw JobError(.invalidTarget, "\(error.description); \(rule)")
            }
        case .web:
            do {
                return try DeviceAddress(platform: .web, text: text).token
            } catch {
                throw JobError(.invalidTarget, error.description)
            }
        }
    }

    /// Whether `text` is a device token by any platform's rules (an iOS token, an Android registration token, which
    /// an installation id also is, or a web subscription's endpoint), as a path names a device: the candidates to
    /// look it up by, the iOS reading (lowercase hex) first. Empty if it is none; the sentence of the iOS rule is then
    /// `problem`.
    public static func tokenCandidates(_ text: String) -> (tokens: [DeviceToken], problem: String?) {
        // A web subscription's endpoint (an https URL): no iOS or Android token has its `:` and `/`.
        if let web = webToken(text) { return ([web], nil) }
        var tokens: [DeviceToken] = []
        var problem: String? = nil
        do {
            tokens.append(try token(text, kind: .device))
        } catch {
            problem = error.message
        }
        if let android = try? token(text, platform: .android), !tokens.contains(android) {
            tokens.append(android)
        }
        return (tokens, tokens.isEmpty ? problem : nil)
    }

    /// A user id: 1 to 256 characters, no control character (the job validator's `target.users` rule).
    public static func userIDProblem(_ value: String) -> String? {
        textProblem(value, field: "user_id", maximum: JobLimits.nameCharacters)
    }

    /// A locale: a BCP 47 tag (`JobLimits.isTag`).
    public static func localeProblem(_ value: String) -> String? {
        JobLimits.isTag(value) ? nil : "locale is not a BCP 47 tag (such as fr, pt-BR or en_US; at most 35 characters)"
    }

    /// A topic a device subscribes to: 1 to 128 characters, no control character, no `;` (the CSV separator).
    public static func topicProblem(_ value: String) -> String? {
        if let problem = textProblem(value, field: "topics", maximum: 128) { return problem }
        return value.contains(";") ? "a topic contains ;" : nil
    }

    /// At most this many topics per device.
    public static let maximumTopics = 100

    static func textProblem(_ value: String, field: String, maximum: Int) -> String? {
        do {
            try JobLimits.text(value, field: field, maximum: maximum)
            return nil
        } catch {
            return error.message
        }
    }
}
