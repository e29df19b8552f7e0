import FCMSimulator
import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import NIOPosix
import Testing

@testable import HeraldDoctor

/// An app's `fcm` block, checked against Herald's FCM simulator: the key file, the signature, an access token
/// minted at `token_uri`, and a `validate_only` send.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct DoctorFCMTests {
    /// The fixture's app with an `fcm` block pointing at a fresh FCM simulator.
    static func withFCMApp(
        serviceAccount: ((String) -> String)? = nil, _ body: (DoctorFixture, FCMSimulator) async throws -> Void
    ) async throws {
        try await DoctorFixture.with { fixture in
            var logger = Logger(label: "fcm-sim")
            logger.logLevel = .warning
            let simulator = FCMSimulator(
                configuration: TestFCM.simulatorConfiguration(), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: logger)
            let port = try await simulator.start()
            let json = TestFCM.serviceAccountJSON(tokenURI: simulator.tokenAudience)
            try fixture.write(serviceAccount?(json) ?? json, to: "firebase.json")
            var apps = try AppsFile.parse(Data(contentsOf: URL(fileURLWithPath: fixture.appsFile)))
            apps.apps[0].fcm = .init(
                serviceAccountFile: "firebase.json", endpoint: "https://127.0.0.1:\(port)", caFile: "ca.pem")
            try fixture.write(apps)
            do {
                try await body(fixture, simulator)
            } catch {
                try? await simulator.stop()
                throw error
            }
            try await simulator.stop()
        }
    }

    @Test func aGoodServiceAccountSignsMintsAndReachesTheEndpointWithoutDelivering() async throws {
        try await Self.withFCMApp { fixture, simulator in
            let report = await fixture.run()
            #expect(report.failed == 0, "\(report.text)")
            let lines = report.findings.map(\.line)
            #expect(lines.contains { $0.contains("holds the key of \(TestFCM.clientEmail)") && $0.hasPrefix("PASS") })
            #expect(lines.contains { $0.contains("an FCM access token was minted") && $0.hasPrefix("PASS") })
            #expect(lines.contains { $0.contains("a validate_only send was answered") && $0.hasPrefix("PASS") })
            #expect(simulator.mintCount(for: TestFCM.clientEmail) == 1)
            #expect(simulator.records.isEmpty)
            // The key never reaches the report.
            #expect(!report.text.contains("PRIVATE KEY"))
        }
    }

    @Test func aFileThatIsNotAServiceAccountFailsNamingTheField() async throws {
        let notAServiceAccount: (String) -> String = { $0.replacingOccurrences(of: "service_account", with: "user") }
        try await Self.withFCMApp(serviceAccount: notAServiceAccount) { fixture, _ in
            let report = await fixture.run()
            let line = try #require(report.findings.map(\.line).first { $0.contains("firebase.json") })
            #expect(line.hasPrefix("FAIL") && line.contains("type"), "\(line)")
            #expect(!report.text.contains("PRIVATE KEY"))
        }
    }

    @Test func aKeyTheTokenEndpointDoesNotKnowFailsAtTheMint() async throws {
        let unknownAccount: (String) -> String = {
            $0.replacingOccurrences(of: TestFCM.clientEmail, with: "someone-else@herald-test.iam.gserviceaccount.com")
        }
        try await Self.withFCMApp(serviceAccount: unknownAccount) { fixture, _ in
            let report = await fixture.run()
            let line = try #require(report.findings.map(\.line).first { $0.contains("no FCM access token") })
            #expect(line.hasPrefix("FAIL"), "\(line)")
        }
    }
}
