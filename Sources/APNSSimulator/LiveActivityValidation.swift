import APNSCore

/// The checks the simulator makes on a Live Activity payload (`apns-push-type: liveactivity`), on the device route
/// and on broadcasts. Pure: bytes in, nil or a ``Rejection`` out.
///
/// Apple documents no reason for a Live Activity payload that lacks its keys (APNs itself accepts it and the device
/// drops it). The simulator is stricter so that Herald's bugs show, and answers 400 `PayloadEmpty` ("The message
/// payload was empty"): of Apple's documented reasons it is the closest, since the payload carries nothing the push
/// type can deliver, and every client already treats it as a permanent error of the request, not of the device.
enum LiveActivityValidation {
    /// The events of a Live Activity push.
    enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    /// The answer to a payload that breaks a rule below.
    static let rejection = Rejection(400, .payloadEmpty)

    /// Checks the payload: a JSON object whose `aps` has an integer `timestamp` (seconds) and an `event` among
    /// `allowed`; `start` also needs `attributes-type` (string), `attributes` (object) and `content-state` (object);
    /// `update` needs `content-state`; `content-state`, if present, is an object; `stale-date` and `dismissal-date`,
    /// if present, are integers.
    static func validate(_ payload: [UInt8], allowing allowed: Set<Event> = Set(Event.allCases)) -> Rejection? {
        guard case .object(let root)? = try? PayloadValue(json: payload), case .object(let aps)? = root["aps"] else {
            return rejection
        }
        guard case .integer(let timestamp)? = aps["timestamp"], timestamp >= 0 else { return rejection }
        guard case .string(let rawEvent)? = aps["event"], let event = Event(rawValue: rawEvent), allowed.contains(event)
        else { return rejection }
        for key in ["stale-date", "dismissal-date"] {
            if let value = aps[key] {
                guard case .integer = value else { return rejection }
            }
        }
        if let contentState = aps["content-state"] {
            guard case .object = contentState else { return rejection }
        }
        switch event {
        case .start:
            guard case .string(let type)? = aps["attributes-type"], !type.isEmpty,
                case .object? = aps["attributes"], aps["content-state"] != nil
            else { return rejection }
        case .update:
            guard aps["content-state"] != nil else { return rejection }
        case .end:
            break
        }
        return nil
    }
}
