import APNSCore
import FCMCore
import WebPushCore

/// What kind of device a token belongs to, and so which provider reaches it: `ios` (an APNs device token, the
/// default), `android` (an FCM registration token or Firebase Installation ID) or `web` (a browser's Push API
/// subscription, whose endpoint URL is its token).
public enum DevicePlatform: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case ios
    case android
    case web

    public var description: String { rawValue }
}

/// A device's address as its provider takes it: an APNs token, or an FCM target of either kind. What the API, the
/// CSV import and the store validate a registration against; `DeviceToken` carries its text through the pipeline
/// (`hex` holds an Android token as it was given: only iOS tokens are hexadecimal).
public enum DeviceAddress: Sendable, Hashable, CustomStringConvertible {
    case apns(DeviceToken)
    case fcm(FCMTarget)
    case web(WebPushEndpoint)

    /// Validates `text` by the rules of `platform`: 1–200 bytes of hex for iOS, an FCM registration token (or, with
    /// `fid`, a Firebase Installation ID) for Android. The error names the rule, never the token.
    public init(platform: DevicePlatform, text: String, fid: Bool = false) throws(DeviceAddressError) {
        switch platform {
        case .ios:
            guard !fid else { throw DeviceAddressError("an iOS device has no Firebase Installation ID") }
            do {
                self = .apns(try DeviceToken(parsing: text))
            } catch {
                throw DeviceAddressError("the token is not an APNs device token: \(error)")
            }
        case .android:
            do {
                self = .fcm(try FCMTarget(kind: fid ? .fid : .token, value: text))
            } catch {
                throw DeviceAddressError(
                    "the token is not an FCM \(fid ? "installation id" : "registration token"): \(error)")
            }
        case .web:
            guard !fid else { throw DeviceAddressError("a web subscription has no Firebase Installation ID") }
            do {
                self = .web(try WebPushEndpoint(text))
            } catch {
                throw DeviceAddressError("the token is not a Web Push endpoint: \(error)")
            }
        }
    }

    /// The platform the address belongs to.
    public var platform: DevicePlatform {
        switch self {
        case .apns: .ios
        case .fcm: .android
        case .web: .web
        }
    }

    /// The token as the pipeline carries it (and the database keeps it).
    public var token: DeviceToken {
        switch self {
        case .apns(let token): token
        case .fcm(let target): DeviceToken(trustedHex: target.value)
        case .web(let endpoint): DeviceToken(trustedHex: endpoint.url)
        }
    }

    /// For an Android device, whether it is addressed by registration token or installation id.
    public var fcmKind: FCMTarget.Kind? {
        if case .fcm(let target) = self { return target.kind }
        return nil
    }

    public var description: String {
        switch self {
        case .apns(let token): "ios \(token)"
        case .fcm(let target): "android \(target)"
        case .web(let endpoint): "web \(endpoint)"
        }
    }
}

extension DeviceAddress {
    /// What a token listed in a job is when no registration says (a token that is not registered, or one of a
    /// small job delivered without reading its devices): a Firebase Installation ID if it has an FID's form (22
    /// characters, the first of c–f: an APNs token is 32 bytes or more, never 11), else an APNs token if it is
    /// hexadecimal, else an FCM registration token.
    public static func byForm(_ token: DeviceToken) -> (platform: DevicePlatform, fcmKind: FCMTarget.Kind?) {
        var text = token.hex
        if text.utf8.count == FCMTarget.fidLength, (try? FCMTarget(fid: text)) != nil { return (.android, .fid) }
        // One pass over the token's bytes (it runs for every token of every small job).
        return text.withUTF8 { bytes in
            if DeviceToken.isValidHex(bytes: bytes) { return (.ios, nil) }
            // A push subscription's endpoint (never listed in a job, but in a retry batch of a web device since
            // pruned): without its registration it has no keys and is not sent.
            if bytes.starts(with: "https://".utf8) { return (.web, nil) }
            return (.android, .token)
        }
    }
}

/// A token that breaks its platform's rules; the message names the rule, never the token.
public struct DeviceAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
