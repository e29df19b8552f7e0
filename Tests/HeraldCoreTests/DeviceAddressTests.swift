import APNSCore
import FCMCore
import HeraldCore
import Testing

/// Tokens by their platform's rules, and a listed token's platform by its form when no registration says.
@Suite struct DeviceAddressTests {
    static let apns = String(repeating: "ab", count: 32)
    static let registration = "d7Xq:APA91b" + String(repeating: "Fk3_Hs-9", count: 17)
    static let fid = "cAAAAAAAAAAAAAAAAAAAA3"

    @Test func eachPlatformHoldsItsTokensToItsOwnRules() throws {
        #expect(try DeviceAddress(platform: .ios, text: Self.apns).platform == .ios)
        #expect(try DeviceAddress(platform: .android, text: Self.registration).fcmKind == .token)
        #expect(try DeviceAddress(platform: .android, text: Self.fid, fid: true).fcmKind == .fid)
        #expect(throws: DeviceAddressError.self) { try DeviceAddress(platform: .ios, text: Self.registration) }
        #expect(throws: DeviceAddressError.self) { try DeviceAddress(platform: .android, text: "short") }
        #expect(throws: DeviceAddressError.self) { try DeviceAddress(platform: .ios, text: Self.apns, fid: true) }
        // The error names the rule, never the token.
        do {
            _ = try DeviceAddress(platform: .ios, text: Self.registration)
        } catch {
            #expect(!error.description.contains(Self.registration))
        }
    }

    @Test(arguments: [
        (apns, DevicePlatform.ios, FCMTarget.Kind?.none),
        (registration, .android, .token),
        (fid, .android, .fid),
        // 22 hex characters starting with c–f: an installation id, not an 11-byte APNs token.
        ("cafe0123456789abcdef01", .android, .fid),
        ("0123456789abcdef0123", .ios, nil),
    ])
    func aListedTokensPlatformFollowsItsForm(token: String, platform: DevicePlatform, kind: FCMTarget.Kind?) {
        let guessed = DeviceAddress.byForm(DeviceToken(trustedHex: token))
        #expect(guessed.platform == platform)
        #expect(guessed.fcmKind == kind)
    }
}
