import APNSCore
import HeraldTestSupport
import PushTransport
import Testing

/// Certificate auth: a PKCS#12 bundle becomes the TLS client certificate and requests carry no provider token.
@Suite struct APNSClientCertificateTests {
    static func certificateAuthentication() throws -> APNSClientConfiguration.Authentication {
        try .certificate(
            p12Bytes: TestCredentials.clientCertificateP12,
            passphrase: TestCredentials.clientCertificatePassphrase
        )
    }

    @Test func certificateFromAPKCS12BundleAuthenticatesWithoutAProviderToken() async throws {
        try await SimulatorFixture.with { simulator in
            simulator.clientCertificateTrustRootsPEM = [TestCredentials.clientCACertificatePEM]
        } client: { client in
            client.authentication = try! Self.certificateAuthentication()
        } _: { fixture in
            let outcome = try await fixture.client.send(makeRequest())
            #expect(outcome.status == 200)
            #expect(fixture.simulator.records.count == 1)
        }
    }

    @Test func clientWithoutACertificateCannotUseAnMTLSServer() async throws {
        // A token client presents no certificate: the mTLS simulator refuses the handshake.
        try await SimulatorFixture.with { simulator in
            simulator.clientCertificateTrustRootsPEM = [TestCredentials.clientCACertificatePEM]
        } _: { fixture in
            await #expect(throws: TransportError.self) {
                try await fixture.client.send(makeRequest())
            }
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func neitherCertificateNorProviderTokenIsMissingProviderToken() async throws {
        // Certificate auth against a server that does not ask for a certificate: the request has no credential.
        try await SimulatorFixture.with { _ in
        } client: { client in
            client.authentication = try! Self.certificateAuthentication()
        } _: { fixture in
            let outcome = try await fixture.client.send(makeRequest())
            #expect(outcome.status == 403)
            #expect(outcome.reason == .missingProviderToken)
            #expect(fixture.simulator.records.isEmpty)
        }
    }

    @Test func wrongPassphraseFailsClearly() throws {
        let error = #expect(throws: TransportError.self) {
            try APNSClientConfiguration.Authentication.certificate(
                p12Bytes: TestCredentials.clientCertificateP12,
                passphrase: "wrong"
            )
        }
        let thrown = try #require(error)
        #expect(thrown.code == .tlsFailed)
        #expect(!"\(thrown)".contains("wrong"))
    }
}
