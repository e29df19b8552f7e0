import Foundation
import WebPushCore

extension AppConfiguration {
    /// An app's Web Push settings (`"webpush"` in the apps file): its browsers' subscriptions are sent to with the
    /// VAPID key (RFC 8292) whose public half the web app passed to `pushManager.subscribe` (docs/webpush.md).
    public struct WebPush: Sendable, Hashable, Codable {
        /// The VAPID private key (P-256, PEM), relative to the apps file. Keep it for the life of the
        /// subscriptions: every subscription is bound to its public key.
        public var vapidPrivateKeyFile: String
        /// The contact the push services may write to: a `mailto:` address or an `https:` URL (Apple's rules).
        public var subject: String
        /// An extra trust root (PEM file) for the push services (a simulator, a proxy); verification is never
        /// switched off.
        public var caFile: String?
        /// Whether messages take the Declarative Web Push form (Safari 18.4+ shows them without a service worker;
        /// other browsers hand them to the service worker as JSON). Needs `navigate`.
        public var declarative: Bool?
        /// The https URL a notification opens when tapped (`notification.navigate`), unless the job names one.
        public var navigate: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case vapidPrivateKeyFile = "vapid_private_key_file"
            case subject
            case caFile = "ca_file"
            case declarative
            case navigate
        }

        public init(
            vapidPrivateKeyFile: String, subject: String, caFile: String? = nil, declarative: Bool? = nil,
            navigate: String? = nil
        ) {
            self.vapidPrivateKeyFile = vapidPrivateKeyFile
            self.subject = subject
            self.caFile = caFile
            self.declarative = declarative
            self.navigate = navigate
        }

        /// Checks the fields that need no file: a key file named, a subject by Apple's rules, `navigate` an https
        /// URL, and `declarative` only with `navigate`.
        func check(app: String) throws(ConfigurationError) {
            guard !vapidPrivateKeyFile.isEmpty else {
                throw ConfigurationError("app \(app): webpush.vapid_private_key_file is empty")
            }
            do {
                _ = try VAPIDSubject(subject)
            } catch {
                throw ConfigurationError("app \(app): webpush.subject: \(error)")
            }
            if let navigate, !WebPushNavigation.isValid(navigate) {
                throw ConfigurationError("app \(app): webpush.navigate must be an https URL of at most 2048 bytes")
            }
            if declarative == true, navigate == nil {
                throw ConfigurationError(
                    "app \(app): webpush.declarative needs webpush.navigate (the URL a notification opens)")
            }
        }

        /// The subject, checked.
        public var vapidSubject: VAPIDSubject? { try? VAPIDSubject(subject) }
    }

    /// The VAPID key, read from `webpush.vapid_private_key_file` (relative to `directory`); nil without `webpush`.
    public func vapidKey(directory: String) throws(ConfigurationError) -> VAPIDKey? {
        guard let webpush else { return nil }
        let text = try AppsFile.read(
            webpush.vapidPrivateKeyFile, relativeTo: directory, what: "webpush.vapid_private_key_file of app \(id)")
        do {
            return try VAPIDKey(pem: text)
        } catch {
            throw ConfigurationError("app \(id): webpush.vapid_private_key_file: \(error)")
        }
    }

    /// The extra trust roots for the push services.
    public func webPushTrustRootsPEM(directory: String) throws(ConfigurationError) -> [String] {
        guard let caFile = webpush?.caFile else { return [] }
        return [try AppsFile.read(caFile, relativeTo: directory, what: "webpush.ca_file of app \(id)")]
    }
}

/// The rule for a notification's `navigate` URL (an app's default or a job's), stated as a pattern in
/// `schemas/job.schema.json`: `https://`, a host of letters, digits, dots and hyphens, an optional port of one to five
/// digits, then optionally a path or query of printable ASCII without space, `"` or `\`; at most 2,048 bytes.
public enum WebPushNavigation {
    /// The longest URL taken, in bytes.
    public static let maximumLength = 2048

    /// Whether `url` may be a notification's `navigate`.
    public static func isValid(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        let prefix = Array("https://".utf8)
        guard bytes.count <= maximumLength, bytes.starts(with: prefix) else { return false }
        var index = prefix.count
        let hostStart = index
        while index < bytes.count, isHostByte(bytes[index]) { index += 1 }
        guard index > hostStart else { return false }
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index += 1
            let portStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard (1...5).contains(index - portStart) else { return false }
        }
        guard index < bytes.count else { return true }
        guard bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?") else { return false }
        return bytes[index...].allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != 0x5C }
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "-")
    }

    /// The pattern `schemas/job.schema.json` states for `notification.webpush.navigate`.
    public static let pattern = "^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?][!#-\\[\\]-~]*)?$"
}
