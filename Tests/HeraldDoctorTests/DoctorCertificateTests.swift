import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldDoctor

/// Certificate apps: the p12 opens with the passphrase its `passphrase_env` names, its validity against the time,
/// and the endpoint accepting it as the TLS client certificate.
@Suite(.needsServices, .timeLimit(.minutes(2))) struct DoctorCertificateTests {
    static let app = DoctorFixture.app
    static let passphraseEnv = "HERALD_TEST_P12_PASSPHRASE"

    /// The fixture with its app switched to certificate auth against a simulator that requires client certificates.
    static func withCertificateApp(_ body: (inout DoctorFixture) async throws -> Void) async throws {
        try await DoctorFixture.with { simulator in
            simulator.clientCertificateTrustRootsPEM = [TestCredentials.clientCACertificatePEM]
        } _: { fixture in
            try Data(TestCredentials.clientCertificateP12).write(
                to: URL(fileURLWithPath: fixture.directory + "/apns.p12"))
            var apps = try AppsFile.parse(Data(contentsOf: URL(fileURLWithPath: fixture.appsFile)))
            apps.apps[0].auth = .certificate(p12File: "apns.p12", passphraseEnv: passphraseEnv)
            try fixture.write(apps)
            fixture.deployment.environment = [passphraseEnv: TestCredentials.clientCertificatePassphrase]
            try await body(&fixture)
        }
    }

    /// The test client certificate's last day (it is valid until 2126-10-28 13:44:34 UTC).
    static let notAfter = Date(timeIntervalSince1970: 4_948_868_674)

    @Test func aValidP12OpensAndTheEndpointAcceptsItsCertificate() async throws {
        try await Self.withCertificateApp { fixture in
            let report = await fixture.run()
            #expect(report.failed == 0 && report.warnings == 0, "\(report.text)")
            let lines = report.findings.map(\.line)
            #expect(
                lines.contains(
                    "PASS app \(Self.app): p12_file \(fixture.directory)/apns.p12 opens; its certificate is valid until 2126-10-28"
                ))
            #expect(
                lines.contains {
                    $0.hasPrefix(
                        "PASS app \(Self.app): the sandbox endpoint 127.0.0.1:\(fixture.port) answers TLS + HTTP/2")
                })
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func aWrongPassphraseFailsNamingTheVariable() async throws {
        try await Self.withCertificateApp { fixture in
            fixture.deployment.environment = [Self.passphraseEnv: "wrong"]
            let report = await fixture.run()
            #expect(
                report.findings.map(\.line).contains(
                    "FAIL app \(Self.app): p12_file \(fixture.directory)/apns.p12 does not open with the passphrase in "
                        + "\(Self.passphraseEnv): check the passphrase, or export the certificate with its private key "
                        + "again as a .p12"))
            #expect(!report.text.contains("wrong"))
        }
    }

    @Test func anUnsetPassphraseVariableFailsNamingIt() async throws {
        try await Self.withCertificateApp { fixture in
            fixture.deployment.environment = [:]
            let report = await fixture.run()
            #expect(
                report.findings.contains {
                    $0.line.hasPrefix("FAIL app \(Self.app): passphrase_env \(Self.passphraseEnv) is not set")
                })
        }
    }

    @Test func anEndpointThatRefusesTheClientCertificateFails() async throws {
        // A token app against an endpoint that requires client certificates presents none.
        try await DoctorFixture.with { simulator in
            simulator.clientCertificateTrustRootsPEM = [TestCredentials.clientCACertificatePEM]
        } _: { fixture in
            let report = await fixture.run()
            let failure = try #require(report.findings.first { $0.status == .fail }, "\(report.text)")
            #expect(
                failure.message.hasPrefix(
                    "the sandbox endpoint 127.0.0.1:\(fixture.port) ended the TLS handshake with the alert"))
        }
    }

    @Test func aCertificateNearItsExpiryWarnsAndAnExpiredOneFails() async throws {
        try await Self.withCertificateApp { fixture in
            fixture.deployment.now = { Self.notAfter.addingTimeInterval(-9.5 * 86_400) }
            let soon = await fixture.run()
            #expect(soon.failed == 0 && soon.warnings == 1, "\(soon.text)")
            #expect(
                soon.findings.contains {
                    $0.line.hasPrefix(
                        "WARN app \(Self.app): the certificate of p12_file \(fixture.directory)/apns.p12 expires on 2126-10-28, in 9 days"
                    )
                })
            #expect(soon.exitStatus(strict: false) == 0)
            #expect(soon.exitStatus(strict: true) == 1)

            fixture.deployment.now = { Self.notAfter.addingTimeInterval(86_400) }
            let expired = await fixture.run()
            #expect(
                expired.findings.map(\.line).contains(
                    "FAIL app \(Self.app): the certificate of p12_file \(fixture.directory)/apns.p12 expired on 2126-10-28: "
                        + "renew the APNs certificate in the Apple Developer account and export a new p12_file"))
        }
    }

    static let validities: [(TimeInterval, DoctorCertificateValidity)] = [
        (-1, .notYetValid),
        (0, .valid),
        (86_400 - 1, .valid),
        (86_400 + 1, .expiresSoon(days: 29)),
        (31 * 86_400 - 1, .expiresSoon(days: 0)),
        (31 * 86_400, .expired),
    ]

    @Test(arguments: validities)
    func validityOfACertificateOf31Days(at offset: TimeInterval, is expected: DoctorCertificateValidity) {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let validity = DoctorCertificateValidity(
            notBefore: start, notAfter: start.addingTimeInterval(31 * 86_400), now: start.addingTimeInterval(offset),
            warning: .seconds(30 * 86_400))
        #expect(validity == expected)
    }

    @Test func aCertificateWithMoreThanTheWarningLeftIsValid() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let validity = DoctorCertificateValidity(
            notBefore: start, notAfter: start.addingTimeInterval(90 * 86_400), now: start,
            warning: .seconds(30 * 86_400))
        #expect(validity == .valid)
    }
}
