import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldTestSupport
import Logging
import NIOPosix
import PushTransport
import Testing

@testable import HeraldWorker

/// SIGHUP's reload of the apps file (`AppsReloader`, `APNSClients.reload`): a new app takes effect for new work,
/// the clients it replaces serve the work that leased them and are shut down after it, and a bad file changes
/// nothing.
@Suite struct AppsReloaderTests {
    static let a = "com.example.a"
    static let b = "com.example.b"

    static func request(_ topic: String) -> APNSRequest {
        APNSRequest(
            deviceToken: DeviceToken(trustedHex: "a1b2c3d4"), topic: topic, pushType: .alert, priority: .immediate,
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8))
    }

    static func write(_ apps: AppsFile, to path: String) throws {
        try JSONEncoder().encode(apps).write(to: URL(fileURLWithPath: path))
    }

    @Test func aReloadAddsAnAppForNewWorkAndShutsTheReplacedClientsDownOnlyAfterTheirWork() async throws {
        let (simulator, port) = try await TestAPNs.startSimulator()
        let (apps, directory) = try TestAPNs.appsFile(apps: [Self.a, Self.b], port: port)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/apps.json"
        try Self.write(AppsFile(apps: apps.apps.filter { $0.id == Self.a }), to: path)
        let clients = try APNSClients(
            apps: AppsFile.parse(Data(contentsOf: URL(fileURLWithPath: path))), directory: directory,
            connectionsPerApp: 1, requestTimeout: .seconds(10), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: Logger(label: "test.clients"))
        let reloader = AppsReloader(path: path, clients: clients, logger: Logger(label: "test.reload"))
        #expect(clients.lease(Self.b) == nil)
        let inFlight = try #require(clients.lease(Self.a))
        #expect(try await inFlight.clients.standard!.send(Self.request(Self.a)).status == 200)

        // The file now names B too; SIGHUP calls this.
        try Self.write(apps, to: path)
        try reloader.reload()
        #expect(clients.apps.apps.map(\.id) == [Self.a, Self.b])
        let forB = try #require(clients.lease(Self.b))
        #expect(try await forB.clients.standard!.send(Self.request(Self.b)).status == 200)
        let forA = try #require(clients.lease(Self.a))
        #expect(forA.clients.standard! !== inFlight.clients.standard!)

        // The work that leased A's old client before the reload still sends through it.
        #expect(try await inFlight.clients.standard!.send(Self.request(Self.a)).status == 200)
        clients.release(inFlight)
        var retirements = clients.retirements.makeAsyncIterator()
        let retired = try #require(await retirements.next())
        #expect(retired.map { ObjectIdentifier($0.standard!) } == [ObjectIdentifier(inFlight.clients.standard!)])
        for app in retired { await app.shutdown() }
        await #expect(throws: TransportError.self) {
            try await inFlight.clients.standard!.send(Self.request(Self.a))
        }
        #expect(try await forA.clients.standard!.send(Self.request(Self.a)).status == 200)

        #expect(simulator.records.map(\.topic) == [Self.a, Self.b, Self.a, Self.a])
        clients.release(forA)
        clients.release(forB)
        await clients.shutdown()
        try await simulator.stop()
    }

    @Test(arguments: [
        ("{not json", "apps file"),
        (
            #"{"apps": [{"id": "com.example.b", "topic": "com.example.b", "environment": "sandbox", "auth": {"type": "token", "team_id": "TEAM123456", "key_id": "KEY1234567", "key_file": "missing.p8"}}]}"#,
            "missing.p8"
        ),
    ])
    func aFileThatCannotBeLoadedIsRefusedAndTheAppsInUseAreKept(_ text: String, _ named: String) async throws {
        let (apps, directory) = try TestAPNs.appsFile(apps: [Self.a], port: 1)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/apps.json"
        let clients = try APNSClients(
            apps: apps, directory: directory, connectionsPerApp: 1, requestTimeout: .seconds(10),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: Logger(label: "test.clients"))
        let before = try #require(clients.lease(Self.a))
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            try AppsReloader(path: path, clients: clients, logger: Logger(label: "test.reload")).reload()
            Issue.record("the reload was accepted")
        } catch {
            #expect(error.description.contains(named), "\(error)")
        }
        #expect(clients.apps == apps)
        let after = try #require(clients.lease(Self.a))
        #expect(after.clients.standard === before.clients.standard)
        #expect(clients.lease(Self.b) == nil)
        clients.release(before)
        clients.release(after)
        await clients.shutdown()
    }
}
