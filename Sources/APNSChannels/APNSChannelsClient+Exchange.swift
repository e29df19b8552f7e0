import APNSCore
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

extension APNSChannelsClient {
    /// APNs' answer to one request: status, the headers the client reads, and the body as JSON (if any).
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var json: PayloadValue?
        /// `reason` of an error answer, cleaned for logs and messages.
        var reason: String?

        var requestID: String? { header("apns-request-id") }

        func header(_ name: String) -> String? { headers.first(name: name) }

        /// The error of this answer, which is not the operation's success.
        func refusal(_ operation: APNSChannelsError.Operation) -> APNSChannelsError {
            .refused(operation, status: status, reason: reason, requestID: requestID)
        }
    }

    /// The bundle id as a path segment.
    var bundleSegment: String {
        configuration.bundleID.addingPercentEncoding(withAllowedCharacters: Self.segmentCharacters)
            ?? configuration.bundleID
    }

    private static let segmentCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Sends one request with the current provider token; after an `ExpiredProviderToken` answer, once more with a
    /// replaced token. Any answer is returned; no answer throws a transient error.
    func exchange(
        _ operation: APNSChannelsError.Operation,
        _ method: HTTPMethod,
        path: String,
        management: Bool,
        headers: [(String, String)],
        body: [UInt8]? = nil
    ) async throws(APNSChannelsError) -> Answer {
        let (host, port) =
            management
            ? (configuration.managementHost, configuration.managementPort)
            : (configuration.broadcastHost, configuration.broadcastPort)
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var token = try currentToken(operation)
        var attempt = 1
        while true {
            var request = HTTPClientRequest(url: "https://\(authority)\(path)")
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            // The token is only ever in this header: never logged, never in an error.
            request.headers.add(name: "authorization", value: "bearer \(token.value)")
            if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
            let answer = try await send(request, operation)
            logger.debug(
                "channel request answered",
                metadata: [
                    "operation": "\(operation.rawValue)", "status": "\(answer.status)",
                    "reason": "\(answer.reason ?? "")", "request-id": "\(answer.requestID ?? "")",
                ])
            guard answer.status == 403, answer.reason == ChannelReason.expiredProviderToken, attempt == 1 else {
                return answer
            }
            do {
                token = try providerTokens.refresh(after: token)
            } catch {
                throw APNSChannelsError(
                    operation, message: "cannot sign a provider token: \(error)", isTransient: false)
            }
            attempt += 1
        }
    }

    private func currentToken(_ operation: APNSChannelsError.Operation) throws(APNSChannelsError)
        -> ProviderTokenCache.Token
    {
        do {
            return try providerTokens.current()
        } catch {
            throw APNSChannelsError(operation, message: "cannot sign a provider token: \(error)", isTransient: false)
        }
    }

    /// Executes `request` and reads its answer, at most ``APNSChannelsConfiguration/maximumResponseBytes``.
    private func send(_ request: HTTPClientRequest, _ operation: APNSChannelsError.Operation)
        async throws(APNSChannelsError) -> Answer
    {
        do {
            let response = try await httpClient.execute(request, timeout: TimeAmount(configuration.requestTimeout))
            var body = try await response.body.collect(upTo: configuration.maximumResponseBytes)
            let bytes = body.readBytes(length: body.readableBytes) ?? []
            let json = bytes.isEmpty ? nil : try? PayloadValue(json: bytes)
            var reason: String? = nil
            if case .object(let fields) = json, case .string(let text) = fields["reason"] {
                reason = Self.clean(text)
            }
            return Answer(status: Int(response.status.code), headers: response.headers, json: json, reason: reason)
        } catch is NIOTooManyBytesError {
            throw APNSChannelsError(
                operation,
                message: "APNs' answer was over \(configuration.maximumResponseBytes) bytes", isTransient: false)
        } catch {
            throw APNSChannelsError(operation, message: Self.describe(error), isTransient: true)
        }
    }

    /// A transport failure by its kind: AsyncHTTPClient's own descriptions may carry more than a log should.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            if [.deadlineExceeded, .readTimeout, .connectTimeout].contains(error) {
                return "APNs did not answer in time"
            }
            if error == .remoteConnectionClosed { return "APNs closed the connection" }
            if error == .alreadyShutdown { return "the channel client is shut down" }
            if error == .cancelled { return "the request was cancelled" }
            return "the request failed (\(error.shortDescription))"
        }
        if error is CancellationError { return "the request was cancelled" }
        if error is NIOSSLError || error is BoringSSLError { return "the TLS handshake with APNs failed" }
        if error is NIOConnectionError || error is IOError || error is ChannelError { return "cannot connect to APNs" }
        return "the request failed (\(type(of: error)))"
    }

    /// A reason as it may appear in logs and messages: printable ASCII, at most 64 characters.
    static func clean(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x21...0x7e).contains($0.value) }.prefix(64)))
    }

    /// Whether `value` can go into a header unchanged: 1 to 1024 printable ASCII characters, no spaces.
    static func isHeaderSafe(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 1024 && value.utf8.allSatisfy { (0x21...0x7e).contains($0) }
    }

    /// Rejects a channel id that cannot be sent as a header (before any request).
    static func checkChannelID(_ id: String, _ operation: APNSChannelsError.Operation) throws(APNSChannelsError) {
        guard isHeaderSafe(id) else {
            throw APNSChannelsError(
                operation, reason: id.isEmpty ? ChannelReason.missingChannelId : ChannelReason.badChannelId,
                message: id.isEmpty
                    ? "no channel id given" : "the channel id is not 1 to 1024 printable characters (base64)",
                isTransient: false)
        }
    }
}

extension HTTPClientError {
    /// The error's kind without associated text.
    fileprivate var shortDescription: String {
        String(describing: self).prefix(while: { $0 != "(" && $0 != ":" }).description
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
