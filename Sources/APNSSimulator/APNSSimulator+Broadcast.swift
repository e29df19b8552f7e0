import APNSCore
import Foundation

extension APNSSimulator {
    /// `POST /4/broadcasts/apps/<bundle>`, after the checks every broadcast endpoint shares. In order:
    /// 1. the headers per ``BroadcastValidation/sendFields(_:bundleID:)``: MissingChannelId, BadChannelId,
    ///    MissingPushType, InvalidPushType, TopicMismatch, BadExpirationDate, BadPriority (all 400);
    /// 2. a channel the bundle does not hold → 400 ChannelNotRegistered;
    /// 3. a channel of message-storage-policy 0 ("No Message Stored") without `apns-expiration: 0` → 400
    ///    BadExpirationDate;
    /// 4. an empty body → 400 PayloadEmpty; over 5,120 bytes → 413 PayloadTooLarge;
    /// 5. a payload that is not a Live Activity `update` or `end` (a broadcast cannot start an activity) → 400
    ///    PayloadEmpty, as on the device route (``LiveActivityValidation``);
    /// otherwise 200 with an empty body, recorded in ``APNSSimulator/broadcasts``.
    func sendBroadcast(
        bundleID: String,
        headers: [(name: String, value: String)],
        payload: [UInt8],
        payloadSize: Int,
        requestID: String
    ) -> Result<BroadcastSuccess, Rejection> {
        let fields: BroadcastValidation.SendFields
        switch BroadcastValidation.sendFields(headers, bundleID: bundleID) {
        case .success(let value): fields = value
        case .failure(let rejection): return .failure(rejection)
        }
        let channel: APNSSimulatorChannel
        switch registeredChannel(bundleID: bundleID, headers: headers) {
        case .success(let value): channel = value
        case .failure(let rejection): return .failure(rejection)
        }
        if channel.messageStoragePolicy == 0, fields.expiration != 0 {
            return .failure(Rejection(400, .badExpirationDate))
        }
        guard payloadSize > 0 else { return .failure(Rejection(400, .payloadEmpty)) }
        guard payloadSize <= BroadcastValidation.maximumBroadcastPayloadSize else {
            return .failure(Rejection(413, .payloadTooLarge))
        }
        if let rejection = LiveActivityValidation.validate(payload, allowing: [.update, .end]) {
            return .failure(rejection)
        }
        let record = APNSSimulatorBroadcastRecord(
            bundleID: bundleID,
            channelID: fields.channelID,
            pushType: PushType.liveactivity.rawValue,
            topic: fields.topic,
            priority: fields.priority,
            expiration: fields.expiration,
            requestID: requestID,
            payload: String(decoding: payload, as: UTF8.self),
            receivedAt: configuration.nowMilliseconds()
        )
        return .success(BroadcastSuccess(status: 200, broadcast: record))
    }
}
