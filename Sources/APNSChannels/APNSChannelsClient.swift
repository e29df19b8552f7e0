import APNSCore
import AsyncHTTPClient
import Logging
import NIOCore
import NIOSSL
import PushTransport

/// Apple's broadcast channel API for one app: channel management (create, read, delete, list) and broadcast sends,
/// over HTTP/2 (AsyncHTTPClient, ALPN) with the app's provider token.
///
/// APNs' refusals of management requests are thrown as ``APNSChannelsError`` with APNs' status and reason; a
/// broadcast's answer, whatever its status, is a ``BroadcastResult`` (only a broadcast that got no answer throws).
/// The provider token comes from a `ProviderTokenCache`, so one token serves every request for up to 50 minutes
/// and an `ExpiredProviderToken` answer replaces it once and retries the request once.
public final class APNSChannelsClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: APNSChannelsConfiguration
    let providerTokens: ProviderTokenCache
    let httpClient: HTTPClient
    let logger: Logger

    /// Makes a client; it connects when it first sends. Call ``shutdown()`` when done.
    ///
    /// - Parameter providerTokens: the app's token cache; share it with other clients of the same key.
    public init(
        configuration: APNSChannelsConfiguration,
        providerTokens: ProviderTokenCache,
        eventLoopGroup: any EventLoopGroup,
        logger: Logger
    ) {
        self.configuration = configuration
        self.providerTokens = providerTokens
        var logger = logger
        logger[metadataKey: "bundle"] = "\(configuration.bundleID)"
        self.logger = logger
        var http = HTTPClient.Configuration(
            tlsConfiguration: .client(trustingAlso: configuration.additionalTrustRootsPEM),
            redirectConfiguration: .disallow,
            timeout: .init(
                connect: TimeAmount(configuration.connectTimeout), read: TimeAmount(configuration.requestTimeout)),
            ignoreUncleanSSLShutdown: false
        )
        http.httpVersion = .automatic
        http.decompression = .disabled
        self.httpClient = HTTPClient(
            eventLoopGroupProvider: .shared(eventLoopGroup), configuration: http, backgroundActivityLogger: logger)
    }

    /// Closes the client's connections. Requests after it fail.
    public func shutdown() async {
        do {
            try await httpClient.shutdown()
        } catch {
            logger.debug("channel client already shut down")
        }
    }

    // MARK: Channel management

    /// Creates a channel with `storagePolicy` and returns its id (APNs answers 201 with `apns-channel-id`).
    public func createChannel(storagePolicy: ChannelStoragePolicy) async throws(APNSChannelsError) -> String {
        let body = #"{"message-storage-policy":\#(storagePolicy.rawValue),"push-type":"LiveActivity"}"#
        let answer = try await exchange(
            .createChannel, .POST, path: "/1/apps/\(bundleSegment)/channels", management: true,
            headers: [("content-type", "application/json")], body: Array(body.utf8))
        guard answer.status == 201 || answer.status == 200 else { throw answer.refusal(.createChannel) }
        guard let id = answer.header("apns-channel-id"), Self.isHeaderSafe(id) else {
            throw APNSChannelsError(
                .createChannel, status: answer.status,
                message: "APNs answered \(answer.status) without a usable apns-channel-id header", isTransient: false,
                requestID: answer.requestID)
        }
        logger.info("channel created", metadata: ["channel": "\(id)", "policy": "\(storagePolicy.rawValue)"])
        return id
    }

    /// The storage policy of channel `id`, or nil when APNs knows no such channel (ChannelNotRegistered).
    public func channelPolicy(id: String) async throws(APNSChannelsError) -> ChannelStoragePolicy? {
        try Self.checkChannelID(id, .readChannel)
        let answer = try await exchange(
            .readChannel, .GET, path: "/1/apps/\(bundleSegment)/channels", management: true,
            headers: [("apns-channel-id", id)])
        if answer.reason == ChannelReason.channelNotRegistered { return nil }
        guard answer.status == 200 else { throw answer.refusal(.readChannel) }
        guard case .object(let fields) = answer.json, case .integer(let raw) = fields["message-storage-policy"],
            let policy = ChannelStoragePolicy(rawValue: Int(raw))
        else {
            throw APNSChannelsError(
                .readChannel, status: 200, message: "APNs answered 200 without a message-storage-policy of 0 or 1",
                isTransient: false, requestID: answer.requestID)
        }
        return policy
    }

    /// Deletes channel `id` (APNs answers 204). Deleting cannot be undone; messages already stored may still be
    /// delivered.
    public func deleteChannel(id: String) async throws(APNSChannelsError) {
        try Self.checkChannelID(id, .deleteChannel)
        let answer = try await exchange(
            .deleteChannel, .DELETE, path: "/1/apps/\(bundleSegment)/channels", management: true,
            headers: [("apns-channel-id", id)])
        guard answer.status == 204 || answer.status == 200 else { throw answer.refusal(.deleteChannel) }
        logger.info("channel deleted", metadata: ["channel": "\(id)"])
    }

    /// Every channel id APNs has for the app in this environment.
    public func listChannels() async throws(APNSChannelsError) -> [String] {
        let answer = try await exchange(
            .listChannels, .GET, path: "/1/apps/\(bundleSegment)/all-channels", management: true, headers: [])
        guard answer.status == 200 else { throw answer.refusal(.listChannels) }
        guard case .object(let fields) = answer.json, case .array(let values) = fields["channels"] ?? .array([])
        else {
            throw APNSChannelsError(
                .listChannels, status: 200, message: "APNs answered 200 without a channels list", isTransient: false,
                requestID: answer.requestID)
        }
        var ids: [String] = []
        for value in values {
            guard case .string(let id) = value else {
                throw APNSChannelsError(
                    .listChannels, status: 200, message: "APNs' channels list holds a value that is not a string",
                    isTransient: false, requestID: answer.requestID)
            }
            ids.append(id)
        }
        return ids
    }

    // MARK: Broadcast

    /// Sends `request` to its channel's subscribers. APNs' answer, whatever its status, is the result; only a
    /// request that got no answer (or could not be sent) throws.
    public func broadcast(_ request: BroadcastRequest) async throws(APNSChannelsError) -> BroadcastResult {
        try Self.checkChannelID(request.channelID, .broadcast)
        var headers: [(String, String)] = [
            ("apns-channel-id", request.channelID),
            ("apns-push-type", "liveactivity"),
            ("apns-topic", configuration.bundleID + ".push-type.liveactivity"),
            ("content-type", "application/json"),
        ]
        if let priority = request.priority { headers.append(("apns-priority", String(priority.rawValue))) }
        if let expiration = request.expiration { headers.append(("apns-expiration", String(expiration))) }
        if let id = request.requestID {
            guard Self.isHeaderSafe(id) else {
                throw APNSChannelsError(.broadcast, message: "the request id is not a UUID", isTransient: false)
            }
            headers.append(("apns-request-id", id))
        }
        let answer = try await exchange(
            .broadcast, .POST, path: "/4/broadcasts/apps/\(bundleSegment)", management: false, headers: headers,
            body: request.payload)
        logger.trace(
            "broadcast answered",
            metadata: [
                "channel": "\(request.channelID)", "status": "\(answer.status)", "reason": "\(answer.reason ?? "")",
            ])
        return BroadcastResult(status: answer.status, reason: answer.reason, requestID: answer.requestID)
    }
}
