import Foundation
import HeraldCore
import Testing

/// `target.platforms`: read beside a device audience, refused with a reason anywhere else, and written back as read.
@Suite struct TargetPlatformsTests {
    static func job(_ target: String) throws(JobError) -> PreparedJob {
        let body = #"{"app":"a","target":\#(target),"notification":{"aps":{"alert":"x"}}}"#
        return try PreparedJob.decode(Array(body.utf8)) { "j" }
    }

    @Test func platformsNarrowADeviceAudience() throws {
        let users = try Self.job(#"{"users":["u"],"platforms":["android"]}"#)
        #expect(users.platforms == [.android] && users.reaches(.android) && !users.reaches(.ios))
        #expect(users.audience == .users(["u"]))
        let all = try Self.job(#"{"all":true,"locales":["fr"],"platforms":["ios","android"]}"#)
        #expect(all.platforms == [.ios, .android] && all.audience == .all(locales: ["fr"]))
        #expect(try Self.job(#"{"topic":"t","platforms":null}"#).platforms == nil)
        // Written back as it was read (the job's spec is stored and read again).
        let encoded = String(decoding: try JSONEncoder().encode(users.spec), as: UTF8.self)
        #expect(encoded.contains(#""platforms":["android"]"#))
        #expect(try PreparedJob.decode(Array(encoded.utf8)) { "j" }.platforms == [.android])
    }

    @Test(arguments: [
        (#"{"users":["u"],"platforms":[]}"#, "platforms is empty"),
        (#"{"users":["u"],"platforms":["watch"]}"#, "a platform is ios, android or web"),
        (#"{"users":["u"],"platforms":["ios","ios"]}"#, "platforms lists ios twice"),
        (#"{"activity":"x","platforms":["ios"]}"#, "platforms narrows only tokens, users, topic and all targets"),
    ])
    func aBadPlatformsIsRefusedNamingTheRule(target: String, reason: String) {
        #expect {
            _ = try Self.job(target)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }
}
