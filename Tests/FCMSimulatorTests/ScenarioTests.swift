import FCMSimulator
import Foundation
import HeraldTestSupport
import Testing

@Suite struct ScenarioTests {
    @Test func aScenarioOverridesOnlyTheFieldsItSets() throws {
        let json = #"""
            {"deadTokenPrefixes": ["dead"], "injectedFailures": [{"status": 503, "every": 10, "retryAfter": 2}],
             "dropConnectionAfterRequests": 500, "responseDelayMilliseconds": 5}
            """#
        let scenario = try JSONDecoder().decode(FCMSimulatorScenario.self, from: Data(json.utf8))
        var configuration = FCMSimulatorConfiguration(
            certificateChainPEM: TestCredentials.serverCertificatePEM,
            privateKeyPEM: TestCredentials.serverPrivateKeyPEM, serviceAccounts: [:])
        configuration.foreignTokenPrefixes = ["foreign"]
        configuration.apply(scenario)
        #expect(configuration.deadTokenPrefixes == ["dead"])
        #expect(configuration.foreignTokenPrefixes == ["foreign"])
        #expect(configuration.injectedFailures == [.unavailable(every: 10, retryAfter: 2)])
        #expect(configuration.dropConnectionAfterRequests == 500)
        #expect(configuration.responseDelay == .milliseconds(5))
        #expect(configuration.maxConcurrentStreams == 100)
    }
}
