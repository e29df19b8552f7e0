import APNSCore
import Foundation
import Logging

/// Apple's broadcast endpoints, served on the simulator's one listener (tests point both the management host and
/// the send host at it).
///
/// Checks, in order (the first that fails answers `{"reason": …}`; every answer carries `apns-request-id`, the
/// request's or a new UUID, and a broadcast send's also `apns-unique-id`):
/// 1. a header name sent twice → 400 DuplicateHeaders;
/// 2. a `/1/…` or `/4/…` path that is none of the endpoints → 404 BadPath; a method the endpoint does not serve →
///    405 MethodNotAllowed;
/// 3. the provider token, as on the device route (403 MissingProviderToken, InvalidProviderToken,
///    ExpiredProviderToken, UnrelatedKeyIdInToken; 429 TooManyProviderTokenUpdates);
/// 4. a bundle in ``APNSSimulatorConfiguration/broadcastDisabledBundles`` → 403 FeatureNotEnabled; a bundle not in
///    ``APNSSimulatorConfiguration/topics`` → 400 TopicDisallowed;
/// 5. the endpoint's own rules:
///    - `POST /1/apps/<bundle>/channels` with `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}` → 201,
///      empty body, the new id in `apns-channel-id`; body errors per ``BroadcastValidation/channelCreation(_:size:)``;
///      the bundle at ``APNSSimulatorConfiguration/maximumChannelsPerApp`` → 400 CannotCreateChannelConfig;
///    - `GET /1/apps/<bundle>/channels` with `apns-channel-id` → 200 `{"message-storage-policy": N, "push-type":
///      "LiveActivity"}` and the id in `apns-channel-id`;
///    - `DELETE /1/apps/<bundle>/channels` with `apns-channel-id` → 204;
///    - `GET /1/apps/<bundle>/all-channels` → 200 `{"channels": [ids in creation order]}`;
///    - a missing channel id → 400 MissingChannelId, a malformed one → 400 BadChannelId, an id the bundle does not
///      hold → 400 ChannelNotRegistered (Apple's table names the reason; 400 is its status for request errors);
///    - `POST /4/broadcasts/apps/<bundle>`: see `APNSSimulator+Broadcast.swift`.
extension APNSSimulator {
    /// What a broadcast endpoint answers when the request is accepted.
    struct BroadcastSuccess {
        var status: Int
        var headers: [(name: String, value: String)] = []
        var body: String? = nil
        var broadcast: APNSSimulatorBroadcastRecord? = nil
    }

    /// Decides, counts and records the answer to a request for one of the broadcast endpoints.
    func answerBroadcastEndpoint(
        _ route: BroadcastValidation.Route,
        headers: [(name: String, value: String)],
        payload: [UInt8],
        payloadSize: Int,
        on connection: ConnectionState
    ) -> Answer {
        let requestID = BroadcastValidation.requestID(headers)
        var answerHeaders: [(name: String, value: String)] = [("apns-request-id", requestID)]
        if case .broadcast = route { answerHeaders.append(("apns-unique-id", UUID().uuidString.lowercased())) }
        let outcome = decideBroadcastEndpoint(
            route, headers: headers, payload: payload, payloadSize: payloadSize, requestID: requestID, on: connection)
        switch outcome {
        case .success(let success):
            finishBroadcastEndpoint(countKey: String(success.status), broadcast: success.broadcast)
            logger.trace("APNs simulator answered a broadcast request", metadata: ["status": "\(success.status)"])
            return Answer(status: success.status, headers: answerHeaders + success.headers, body: success.body)
        case .failure(let rejection):
            finishBroadcastEndpoint(countKey: rejection.countKey, broadcast: nil)
            logger.trace(
                "APNs simulator rejected a broadcast request",
                metadata: ["status": "\(rejection.status)", "reason": "\(rejection.reason)"]
            )
            return Answer(status: rejection.status, headers: answerHeaders, body: rejection.body)
        }
    }

    private func decideBroadcastEndpoint(
        _ route: BroadcastValidation.Route,
        headers: [(name: String, value: String)],
        payload: [UInt8],
        payloadSize: Int,
        requestID: String,
        on connection: ConnectionState
    ) -> Result<BroadcastSuccess, Rejection> {
        var seen = Set<String>()
        for header in headers where !seen.insert(header.name).inserted {
            return .failure(Rejection(400, .duplicateHeaders))
        }
        guard let bundleID = route.bundleID else { return .failure(Rejection(404, .badPath)) }
        let method = BroadcastValidation.value(":method", in: headers) ?? ""
        guard route.methods.contains(method) else { return .failure(Rejection(405, .methodNotAllowed)) }

        let authorization = BroadcastValidation.value("authorization", in: headers)
        if configuration.clientCertificateTrustRootsPEM.isEmpty || authorization != nil {
            if let rejection = authenticate(authorization, now: configuration.now(), on: connection) {
                return .failure(rejection)
            }
        }
        if configuration.broadcastDisabledBundles.contains(bundleID) {
            return .failure(Rejection(status: 403, reason: BroadcastValidation.featureNotEnabled))
        }
        if let allowed = configuration.topics, !allowed.contains(bundleID) {
            return .failure(Rejection(400, .topicDisallowed))
        }

        switch (route, method) {
        case (.channels, "POST"):
            return createChannel(bundleID: bundleID, body: payload, size: payloadSize)
        case (.channels, "GET"):
            return readChannel(bundleID: bundleID, headers: headers)
        case (.channels, _):
            return deleteChannel(bundleID: bundleID, headers: headers)
        case (.allChannels, _):
            let ids = channelRegistry.withLock { $0.list(bundleID: bundleID) }.map(\.id)
            return .success(BroadcastSuccess(status: 200, body: Self.channelList(ids)))
        case (.broadcast, _):
            return sendBroadcast(
                bundleID: bundleID, headers: headers, payload: payload, payloadSize: payloadSize,
                requestID: requestID)
        case (.badPath, _):
            return .failure(Rejection(404, .badPath))
        }
    }

    private func createChannel(bundleID: String, body: [UInt8], size: Int) -> Result<BroadcastSuccess, Rejection> {
        let policy: Int
        switch BroadcastValidation.channelCreation(body, size: size) {
        case .success(let value): policy = value
        case .failure(let rejection): return .failure(rejection)
        }
        let maximum = configuration.maximumChannelsPerApp
        let now = configuration.nowMilliseconds()
        let result = channelRegistry.withLock {
            $0.create(
                bundleID: bundleID, messageStoragePolicy: policy, pushType: BroadcastValidation.channelPushType,
                maximum: maximum, now: now)
        }
        switch result {
        case .created(let channel):
            return .success(BroadcastSuccess(status: 201, headers: [("apns-channel-id", channel.id)]))
        case .quotaReached:
            return .failure(Rejection(status: 400, reason: BroadcastValidation.cannotCreateChannelConfig))
        }
    }

    private func readChannel(bundleID: String, headers: [(name: String, value: String)])
        -> Result<BroadcastSuccess, Rejection>
    {
        switch registeredChannel(bundleID: bundleID, headers: headers) {
        case .success(let channel):
            let body =
                #"{"message-storage-policy":\#(channel.messageStoragePolicy),"push-type":"\#(channel.pushType)"}"#
            return .success(BroadcastSuccess(status: 200, headers: [("apns-channel-id", channel.id)], body: body))
        case .failure(let rejection):
            return .failure(rejection)
        }
    }

    private func deleteChannel(bundleID: String, headers: [(name: String, value: String)])
        -> Result<BroadcastSuccess, Rejection>
    {
        let id: String
        switch BroadcastValidation.channelID(headers) {
        case .success(let value): id = value
        case .failure(let rejection): return .failure(rejection)
        }
        guard channelRegistry.withLock({ $0.delete(id, bundleID: bundleID) }) else {
            return .failure(Rejection(status: 400, reason: BroadcastValidation.channelNotRegistered))
        }
        return .success(BroadcastSuccess(status: 204))
    }

    /// The channel `apns-channel-id` names in this bundle: MissingChannelId, BadChannelId or ChannelNotRegistered
    /// otherwise.
    func registeredChannel(bundleID: String, headers: [(name: String, value: String)])
        -> Result<APNSSimulatorChannel, Rejection>
    {
        switch BroadcastValidation.channelID(headers) {
        case .success(let id):
            guard let channel = channelRegistry.withLock({ $0.channel(id, bundleID: bundleID) }) else {
                return .failure(Rejection(status: 400, reason: BroadcastValidation.channelNotRegistered))
            }
            return .success(channel)
        case .failure(let rejection):
            return .failure(rejection)
        }
    }

    /// `{"channels":[…]}`; ids are base64, which needs no JSON escaping, but are escaped anyway should a test seed
    /// an odd one.
    private static func channelList(_ ids: [String]) -> String {
        let quoted = ids.map { id in
            "\"" + id.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return #"{"channels":[\#(quoted.joined(separator: ","))]}"#
    }

    /// Counts an answer, records an accepted broadcast and wakes the waiters it satisfies.
    private func finishBroadcastEndpoint(countKey: String, broadcast: APNSSimulatorBroadcastRecord?) {
        let ready = state.withLock { $0.answered(countKey, broadcast: broadcast) }
        for continuation in ready { continuation.resume() }
    }
}
