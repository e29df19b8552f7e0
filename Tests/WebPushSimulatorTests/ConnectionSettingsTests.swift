import NIOHTTP2
import Testing
import WebPushSimulator

@Suite struct ConnectionSettingsTests {
    @Test(arguments: [100, 7])
    func theInitialSettingsAdvertiseMaxConcurrentStreams(_ limit: Int) async throws {
        try await withSimulator {
            $0.maxConcurrentStreams = limit
        } _: { fixture in
            let settings = try await SettingsProbe.initialSettings(port: fixture.port)
            #expect(settings.first { $0.parameter == .maxConcurrentStreams }?.value == limit)
        }
    }
}
