import Foundation
import HeraldCore
import Logging
import NIOPosix
import WebPushCore
import WebPushSimulator

/// The demo's browsers: a Web Push simulator that keeps each subscription's private key and decrypts what it gets,
/// the app's VAPID key (made for the run, written beside the apps file), and one browser subscription for each of
/// the first users, every tenth of them unsubscribed (the simulator answers 410).
struct DemoBrowsers {
    static let keyFileName = "vapid-demo.pem"
    static let subject = "mailto:push@news.example"

    let simulator: WebPushSimulator
    let key: VAPIDKey

    /// Starts the simulator on the demo's certificate and writes the VAPID key.
    static func start(directory: String, certificatePEM: String, keyPEM: String, logger: Logger) async throws
        -> DemoBrowsers
    {
        let key = VAPIDKey.generate()
        let path = directory + "/" + keyFileName
        try? FileManager.default.removeItem(atPath: path)
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data(key.pem.utf8), attributes: [.posixPermissions: 0o600])
        else { throw DemoBrowsersError("cannot write \(path)") }
        var configuration = WebPushSimulatorConfiguration(certificateChainPEM: certificatePEM, privateKeyPEM: keyPEM)
        configuration.vapidPublicKeys = [key.applicationServerKey]
        let simulator = WebPushSimulator(
            configuration: configuration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
        _ = try await simulator.start()
        return DemoBrowsers(simulator: simulator, key: key)
    }

    /// The app's `webpush` block.
    var settings: AppConfiguration.WebPush {
        .init(vapidPrivateKeyFile: Self.keyFileName, subject: Self.subject, caFile: "ca.pem")
    }

    /// One subscription for each of users `user-0` … `user-(count-1)`, made at the simulator as a browser makes one;
    /// every tenth is then unsubscribed.
    func subscribe(users count: Int) throws -> [(device: DeviceRecord, isDead: Bool)] {
        try (0..<count).map { i in
            let made = simulator.makeSubscription(id: "browser-\(i)", applicationServerKey: key.applicationServerKey)
            let dead = i % 10 == 9
            if dead { simulator.unsubscribe(id: made.id) }
            let subscription = try WebPushSubscription(endpoint: made.endpoint, p256dh: made.p256dh, auth: made.auth)
            return (DeviceRecord(webSubscription: subscription, userID: "user-\(i)", locale: "en"), dead)
        }
    }

    /// The endpoints the simulator took each demo job's notification at (by its `data.demo_job`), decrypted.
    func received() -> [String: [String]] {
        var received: [String: [String]] = [:]
        for record in simulator.records {
            guard let plaintext = record.plaintext,
                let object = try? JSONSerialization.jsonObject(with: Data(plaintext)) as? [String: Any],
                let job = (object["data"] as? [String: Any])?["demo_job"] as? String
            else { continue }
            received[job, default: []].append(simulator.endpoint(id: record.subscriptionID))
        }
        return received
    }
}

struct DemoBrowsersError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
