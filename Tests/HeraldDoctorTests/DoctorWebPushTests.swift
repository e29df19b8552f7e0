import Foundation
import HeraldCore
import HeraldTestSupport
import Testing
import WebPushCore

@testable import HeraldDoctor

/// An app's `webpush` block: the VAPID key file, the subject by Apple's rules, and a token that verifies.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct DoctorWebPushTests {
    static func withWebPushApp(
        key: String, subject: String = "mailto:push@news.example", _ body: (DoctorFixture) async throws -> Void
    ) async throws {
        try await DoctorFixture.with { fixture in
            try fixture.write(key, to: "vapid.pem")
            var apps = try AppsFile.parse(Data(contentsOf: URL(fileURLWithPath: fixture.appsFile)))
            apps.apps[0].webpush = .init(vapidPrivateKeyFile: "vapid.pem", subject: subject)
            try fixture.write(apps)
            try await body(fixture)
        }
    }

    @Test func aGoodKeySignsTokensThatVerifyAndIsNeverPrinted() async throws {
        let key = VAPIDKey.generate()
        try await Self.withWebPushApp(key: key.pem) { fixture in
            let report = await fixture.run()
            let line = try #require(report.findings.map(\.line).first { $0.contains("webpush") })
            #expect(line.hasPrefix("PASS"), "\(line)")
            #expect(line.contains(key.keyID))
            #expect(!report.text.contains("PRIVATE KEY"))
        }
    }

    @Test func aFileThatIsNotAP256KeyFailsNamingTheField() async throws {
        try await Self.withWebPushApp(key: "not a key\n") { fixture in
            let report = await fixture.run()
            let line = try #require(report.findings.map(\.line).first { $0.contains("webpush") })
            #expect(line.hasPrefix("FAIL"), "\(line)")
            #expect(line.contains("vapid_private_key_file"))
        }
    }
}
