/// A VAPID token's `sub` claim: how the push service reaches the sender's operator. Checked against what Apple's
/// push service accepts (it answers 403 `BadJwtToken` to every message otherwise, while FCM and Mozilla may take it):
///
/// - `mailto:` followed by one plain address, `local@domain`: no spaces, no angle brackets, no display name, no
///   query, a domain with a dot that is not `localhost`;
/// - or an `https://` URL with a host.
///
/// The scheme is written in lower case; the rest is kept as given.
public struct VAPIDSubject: Sendable, Hashable, CustomStringConvertible {
    /// The claim's value.
    public let value: String

    /// The longest subject taken, in bytes.
    public static let maximumLength = 512

    /// Checks `text`; the error says which rule it breaks (it does not repeat the text).
    public init(_ text: String) throws(VAPIDSubjectError) {
        guard !text.isEmpty else { throw VAPIDSubjectError("the subject is empty; use mailto:you@example.com") }
        guard text.utf8.count <= Self.maximumLength else {
            throw VAPIDSubjectError("the subject is \(text.utf8.count) bytes; at most \(Self.maximumLength)")
        }
        guard
            !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw VAPIDSubjectError("the subject contains a space or control character (Apple refuses it)")
        }
        let lowered = text.lowercased()
        if lowered.hasPrefix("mailto:") {
            let address = text.dropFirst("mailto:".count)
            try Self.checkAddress(address)
            self.value = "mailto:" + address
        } else if lowered.hasPrefix("https://") {
            let rest = text.dropFirst("https://".count)
            guard WebPushNotification.isHTTPSURL(text) else {
                throw VAPIDSubjectError("an https subject must be a URL with a host (https://example.com/contact)")
            }
            self.value = "https://" + rest
        } else if lowered.hasPrefix("http://") {
            throw VAPIDSubjectError("the subject must be https, not http")
        } else if text.contains("@") && !text.contains(":") {
            throw VAPIDSubjectError("a bare address is refused by Apple; write mailto: before it")
        } else {
            throw VAPIDSubjectError("the subject must start with mailto: or https://")
        }
    }

    private static func checkAddress(_ address: Substring) throws(VAPIDSubjectError) {
        guard !address.isEmpty else { throw VAPIDSubjectError("mailto: has no address after it") }
        guard !address.contains("<"), !address.contains(">") else {
            throw VAPIDSubjectError("the mailto: address must be plain, without angle brackets or a display name")
        }
        guard !address.contains("?"), !address.contains(","), !address.contains(";") else {
            throw VAPIDSubjectError("the mailto: address must be one plain address, without a query or a list")
        }
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw VAPIDSubjectError("the mailto: address must be local@domain, with one @")
        }
        let domain = parts[1].lowercased()
        guard domain != "localhost", !domain.hasSuffix(".localhost") else {
            throw VAPIDSubjectError("the mailto: domain must not be localhost (Apple refuses it)")
        }
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains("..") else {
            throw VAPIDSubjectError("the mailto: domain must be a full domain name with a dot (example.com)")
        }
        guard domain.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." }) else {
            throw VAPIDSubjectError("the mailto: domain may hold only letters, digits, '-' and '.'")
        }
    }

    /// The subject (an operator's contact, not a secret).
    public var description: String { value }
}

/// A subject that breaks one of the rules; the message names the rule, not the subject.
public struct VAPIDSubjectError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rule broken.
    public let description: String

    init(_ description: String) { self.description = description }
}
