import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldMessaging
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The apps' webhooks as the worker uses them: each app's URL, signing secret and TLS trust, read once at start.
struct Webhooks: Sendable, CustomStringConvertible {
    /// Never prints the secret or the URL's path: ServiceLifecycle logs its services' descriptions.
    struct Endpoint: Sendable, CustomStringConvertible {
        let url: String
        /// The URL's host, the only part of it that logs and reasons name (a path or query may hold a secret).
        let host: String
        let secret: [UInt8]
        let tls: TLSConfiguration?

        var description: String { "webhook at \(host)" }
    }

    /// The shortest and longest signing secret accepted.
    static let secretBytes = 16...1024

    let byApp: [String: Endpoint]

    /// Reads each webhook's secret (and CA) from its file, relative to `directory` unless absolute. Errors name the
    /// app and the file, never what the file holds.
    init(apps: AppsFile, directory: String) throws(ConfigurationError) {
        var byApp: [String: Endpoint] = [:]
        for app in apps.apps {
            guard let webhook = app.webhook else { continue }
            var secret = Array(
                try AppsFile.read(
                    webhook.secretFile, relativeTo: directory, what: "webhook.secret_file of app \(app.id)"
                )
                .utf8)
            if secret.last == UInt8(ascii: "\n") { secret.removeLast() }
            guard Self.secretBytes.contains(secret.count) else {
                throw ConfigurationError(
                    "app \(app.id): webhook.secret_file must hold \(Self.secretBytes.lowerBound) to "
                        + "\(Self.secretBytes.upperBound) bytes, not \(secret.count)")
            }
            var tls: TLSConfiguration? = nil
            if let caFile = webhook.caFile {
                let pem = try AppsFile.read(caFile, relativeTo: directory, what: "webhook.ca_file of app \(app.id)")
                guard let roots = try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)), !roots.isEmpty else {
                    throw ConfigurationError("app \(app.id): webhook.ca_file holds no PEM certificate")
                }
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.additionalTrustRoots = [.certificates(roots)]
                tls = configuration
            }
            let host = URLComponents(string: webhook.url)?.host ?? "?"
            byApp[app.id] = Endpoint(url: webhook.url, host: host, secret: secret, tls: tls)
        }
        self.byApp = byApp
    }

    var isEmpty: Bool { byApp.isEmpty }

    var description: String { "Webhooks(apps: \(byApp.keys.sorted()))" }

    /// What one POST came to.
    enum Answer: Sendable, Equatable {
        case delivered
        /// Why it failed, without the URL's path or query.
        case failed(String)
    }

    /// POSTs an event to `endpoint`, signed at `signedAt` (seconds since 1970: now). Any 2xx is delivered;
    /// anything else, a timeout or a connection failure is a failure to try again.
    static func post(
        _ body: [UInt8], event: String, id: String, attempt: Int, to endpoint: Endpoint, client: HTTPClient,
        timeout: Duration, signedAt now: Int64
    ) async -> Answer {
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.tlsConfiguration = endpoint.tls
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "herald-webhooks")
        request.headers.add(name: "x-herald-event", value: event)
        request.headers.add(name: "x-herald-delivery", value: id)
        request.headers.add(name: "x-herald-attempt", value: String(attempt))
        request.headers.add(
            name: WebhookSignature.header, value: WebhookSignature.sign(body, secret: endpoint.secret, at: now))
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: .init(timeout))
            // Read (a bounded amount of) the answer so that the connection can be used again.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else {
                return .failed("\(endpoint.host) answered \(response.status.code)")
            }
            return .delivered
        } catch {
            return .failed("\(endpoint.host): \(Self.describe(error))")
        }
    }

    /// A failure named by its kind: AsyncHTTPClient's descriptions can carry the URL.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            if [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) { return "no answer in time" }
            if error == .remoteConnectionClosed { return "connection closed" }
            return "request failed"
        }
        if error is NIOSSLError || error is BoringSSLError { return "TLS failed" }
        if error is NIOConnectionError || error is IOError { return "cannot connect" }
        return "request failed"
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
