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
}
