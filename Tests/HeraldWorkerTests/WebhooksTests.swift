import Foundation
import HeraldCore
import Testing

@testable import HeraldWorker

/// The apps' webhooks as the worker reads them: secrets bounded and never printed, signatures a receiver can check.
@Suite struct WebhooksTests {
    static func apps(secret: String, url: String = "https://hooks.example.com/herald/t0k3n-in-path") throws
        -> (AppsFile, String)
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try secret.write(toFile: directory + "/secret", atomically: true, encoding: .utf8)
        var app = AppConfiguration(
            id: "com.example.news", topic: "com.example.news", environment: .sandbox,
            auth: .token(teamID: "T", keyID: "K", keyFile: "k.p8"))
        app.webhook = .init(url: url, secretFile: "secret")
        return (AppsFile(apps: [app]), directory)
    }

    @Test func neitherTheSecretNorTheURLsPathIsEverPrinted() throws {
        let secret = "s3cret-of-sixteen-bytes-or-more"
        let (apps, directory) = try Self.apps(secret: secret + "\n")
        let webhooks = try Webhooks(apps: apps, directory: directory)
        #expect(webhooks.byApp["com.example.news"]?.secret == Array(secret.utf8))  // the final newline dropped
        // ServiceLifecycle logs a service with String(describing:), which reflects into its stored properties.
        struct Holder { let webhooks: Webhooks }
        for printed in [
            String(describing: webhooks), String(describing: Holder(webhooks: webhooks)), "\(webhooks.byApp)",
        ] {
            // Neither as text nor as the bytes an array of UInt8 prints as.
            let bytes = Array(secret.utf8).prefix(4).map(String.init).joined(separator: ", ")
            #expect(!printed.contains(secret) && !printed.contains(bytes) && !printed.contains("t0k3n"))
            #expect(printed.contains("com.example.news"))
        }
    }

    @Test func aSecretOutsideItsBoundsIsRefusedNamingTheAppNotTheSecret() throws {
        let (apps, directory) = try Self.apps(secret: "short")
        #expect {
            try Webhooks(apps: apps, directory: directory)
        } throws: { error in
            let text = "\(error)"
            return text.contains("com.example.news") && text.contains("16 to 1024 bytes") && !text.contains("short")
        }
    }

    @Test func aSignatureVerifiesOnlyForItsBodySecretAndTime() {
        let body = Array(#"{"event":"job.finished"}"#.utf8)
        let secret = Array("a-secret-for-the-signature".utf8)
        let header = WebhookSignature.sign(body, secret: secret, at: 1_700_000_000)
        #expect(header.hasPrefix("t=1700000000,v1=") && header.count == "t=1700000000,v1=".count + 64)
        #expect(WebhookSignature.verify(header, body: body, secret: secret, now: 1_700_000_100))
        #expect(!WebhookSignature.verify(header, body: body, secret: secret, now: 1_700_000_301))  // a replay
        #expect(!WebhookSignature.verify(header, body: body + [0x20], secret: secret, now: 1_700_000_000))
        #expect(!WebhookSignature.verify(header, body: body, secret: Array("other".utf8), now: 1_700_000_000))
        #expect(!WebhookSignature.verify("t=1700000000,v1=zz", body: body, secret: secret, now: 1_700_000_000))
    }

    // MARK: Lanes and circuit breakers

    typealias Breaker = WebhookCircuitBreaker<ContinuousClock.Instant>

    @Test func theBreakerOpensAfterItsThresholdOfFailuresInARowAndProbesOnceItsTimeIsUp() {
        let start = ContinuousClock.now
        var breaker = Breaker(threshold: 3, openFor: .seconds(30))
        // Two failures and a delivery: the count starts again.
        for _ in 0..<2 {
            #expect(breaker.admit(now: start) == .send)
            breaker.record(delivered: false, now: start)
        }
        breaker.record(delivered: true, now: start)
        #expect(breaker.state == .closed(failures: 0))
        for _ in 0..<3 {
            #expect(breaker.admit(now: start) == .send)
            breaker.record(delivered: false, now: start)
        }
        #expect(breaker.state == .open(until: start + .seconds(30)))
        #expect(breaker.admit(now: start + .seconds(29)) == .refused(until: start + .seconds(30)))
        // Half-open: one probe, the others still refused while it is in flight.
        #expect(breaker.admit(now: start + .seconds(30)) == .probe)
        #expect(breaker.admit(now: start + .seconds(31)) == .refused(until: nil))
        // A failed probe opens it again, for another period from then.
        breaker.record(delivered: false, now: start + .seconds(32))
        #expect(breaker.state == .open(until: start + .seconds(62)))
        #expect(breaker.admit(now: start + .seconds(62)) == .probe)
        breaker.record(delivered: true, now: start + .seconds(63))
        #expect(breaker.state == .closed(failures: 0))
        #expect(breaker.admit(now: start + .seconds(63)) == .send)
    }

    @Test func aLaneAdmitsItsConcurrencyPerAppAndAnOpenEndpointRefusesOnlyItsOwnApp() {
        let now = ContinuousClock.now
        let lanes = WebhookLanes(concurrency: 2, threshold: 1, openFor: .seconds(60))
        #expect(lanes.admit(app: "slow", endpoint: "https://slow", now: now) == .send(probe: false))
        #expect(lanes.admit(app: "slow", endpoint: "https://slow", now: now) == .send(probe: false))
        // The slow app's lane is full; the fast app's is not.
        #expect(lanes.admit(app: "slow", endpoint: "https://slow", now: now) == .busy)
        #expect(lanes.admit(app: "fast", endpoint: "https://fast", now: now) == .send(probe: false))
        lanes.finish(app: "fast", endpoint: "https://fast", delivered: true, now: now)
        // One failure opens the slow endpoint's breaker (threshold 1): its app is refused, the other is not.
        lanes.finish(app: "slow", endpoint: "https://slow", delivered: false, now: now)
        #expect(lanes.isOpen("https://slow") && !lanes.isOpen("https://fast"))
        #expect(lanes.admit(app: "slow", endpoint: "https://slow", now: now) == .open)
        #expect(lanes.admit(app: "fast", endpoint: "https://fast", now: now) == .send(probe: false))
        #expect(lanes.inFlight("slow") == 1 && lanes.inFlight("fast") == 1)
        // After the open period, one probe goes.
        lanes.finish(app: "slow", endpoint: "https://slow", delivered: false, now: now)
        #expect(lanes.admit(app: "slow", endpoint: "https://slow", now: now + .seconds(60)) == .send(probe: true))
        #expect(lanes.admit(app: "slow", endpoint: "https://slow", now: now + .seconds(60)) == .open)
    }

    @Test(arguments: [
        ("event-42", Int64?.some(42)), ("event-0", nil), ("event--1", nil), ("event-", nil), ("42", nil),
        ("event-99999999999999999999", nil), ("event-4 2", nil), ("EVENT-42", nil),
    ])
    func onlyAnOutboxMessageIdNamesAnEvent(_ messageID: String, _ id: Int64?) {
        #expect(WebhookConsumer.eventID(messageID) == id)
    }
}
