import Foundation
import HeraldCore
import RabbitMQ

/// What an operator may see of a parked message: its headers, read and bounded, and the job id and app if its body
/// is a job or a batch. Never the body itself, which can hold device tokens.
///
/// Every field comes from outside (a producer, an older Herald, the broker's dead-lettering): strings are cut to a
/// bound and stripped of control characters, numbers are range-checked, and a value of the wrong type counts as
/// absent.
package struct ParkedMessage: Sendable, Hashable, Encodable {
    /// `x-herald-reason`, or for a message the broker dead-lettered, `dead-lettered: <its reason>`.
    package var reason: String?
    /// `x-herald-origin-queue`, or the queue the broker dead-lettered it from.
    package var originQueue: String?
    /// `x-herald-attempts`.
    package var attempts: Int?
    /// When it was parked, in seconds since the Unix epoch: `x-herald-parked-at`, else the broker's dead-lettering
    /// time, else the message's `timestamp` (its publication, which parking came after). Nil when none is known.
    package var parkedAt: Int64?
    /// The AMQP message id.
    package var messageID: String?
    /// The job's id (`id` of a job, `job` of a batch), if the body is a JSON object with one.
    package var jobID: String?
    /// The job's app, likewise.
    package var app: String?
    /// The body's size in bytes.
    package var bodySize: Int

    enum CodingKeys: String, CodingKey {
        case reason
        case originQueue = "origin_queue"
        case attempts
        case parkedAt = "parked_at"
        case messageID = "message_id"
        case jobID = "job_id"
        case app
        case bodySize = "body_size"
    }

    /// How the reason of a message parked after its notifications were sent begins (the worker's
    /// `SentButNotSettled`): replaying it sends them again.
    package static let sentButNotSettled = "sent, but the outcome could not be written"

    /// The longest reason kept (`Parking` writes at most 1,000 characters).
    static let reasonLimit = 1000
    /// The longest queue name AMQP allows.
    static let queueNameLimit = 255
    /// The longest id or app shown (job ids are at most 128 bytes, app ids fewer).
    static let identifierLimit = 200
    /// Bodies larger than this are not read for a job id: the worker reads none larger than its 1 MiB default.
    static let peekLimit = 1 << 20

    /// Reads `delivery`'s headers and, for a JSON body within `peekLimit`, its job id and app.
    /// - Parameter now: the time (seconds since 1970) a parking time may not be more than a day beyond.
    package init(_ delivery: AMQPDelivery, now: Int64 = HeraldClock.system.unixSeconds) {
        let headers = delivery.properties.headers
        let death = Self.firstDeath(headers)
        reason =
            Self.text(headers[ParkingHeader.reason], limit: Self.reasonLimit)
            ?? Self.text(headers["x-first-death-reason"], limit: 100).map { "dead-lettered: " + $0 }
        originQueue =
            Self.text(headers[ParkingHeader.originQueue], limit: Self.queueNameLimit)
            ?? Self.text(headers["x-first-death-queue"], limit: Self.queueNameLimit)
        attempts = Self.integer(headers[ParkingHeader.attempts], in: 0...1_000_000).map(Int.init)
        let plausible: ClosedRange<Int64> = 0...now + 86_400
        parkedAt =
            Self.integer(headers[ParkingHeader.parkedAt], in: plausible)
            ?? Self.integer(death?["time"], in: plausible)
            ?? delivery.properties.timestamp.flatMap { plausible.contains($0) ? $0 : nil }
        messageID = delivery.properties.messageID.flatMap { Self.clean($0, limit: Self.identifierLimit) }
        bodySize = delivery.body.count
        (jobID, app) = Self.identity(of: delivery.body)
    }

    /// How long ago it was parked at `now` (seconds since the epoch); nil when that is not known.
    package func age(at now: Int64) -> Int64? {
        parkedAt.map { max(0, now - $0) }
    }

    /// `value` as a string, cleaned and bounded; nil if it is not a non-empty string.
    static func text(_ value: AMQPFieldValue?, limit: Int) -> String? {
        guard case .string(let string)? = value else { return nil }
        return clean(string, limit: limit)
    }

    static func integer(_ value: AMQPFieldValue?, in range: ClosedRange<Int64>) -> Int64? {
        guard case .int(let number)? = value, range.contains(number) else { return nil }
        return number
    }

    /// At most `limit` characters, control characters (a terminal's escape sequences among them) replaced.
    package static func clean(_ string: String, limit: Int) -> String? {
        let kept = String(
            String.UnicodeScalarView(
                string.unicodeScalars.prefix(limit).map {
                    $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "?" : $0
                }))
        return kept.isEmpty ? nil : kept
    }

    /// The first entry of the broker's `x-death` header (the most recent dead-lettering).
    private static func firstDeath(_ headers: AMQPTable) -> [String: AMQPFieldValue]? {
        guard case .array(let deaths)? = headers["x-death"], case .table(let first)? = deaths.first else { return nil }
        return first
    }

    /// The `id` (a job) or `job` (a batch) and the `app` of a JSON object body.
    private static func identity(of body: [UInt8]) -> (String?, String?) {
        guard body.count <= peekLimit, body.first == UInt8(ascii: "{"),
            let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        else { return (nil, nil) }
        let id = (object["id"] as? String) ?? (object["job"] as? String)
        return (
            id.flatMap { clean($0, limit: identifierLimit) },
            (object["app"] as? String).flatMap { clean($0, limit: identifierLimit) }
        )
    }
}

/// Which parked messages an operator's command takes: all of its conditions hold.
package struct ParkedMessageFilter: Sendable, Hashable {
    /// The reason starts with this (`unknown_app` matches `unknown_app: app … is not in the apps file`).
    package var reason: String?
    /// The job id, or the message id, is exactly this.
    package var id: String?
    /// Parked at least this many seconds ago (a message whose parking time is unknown never matches).
    package var olderThanSeconds: Int64?

    package init(reason: String? = nil, id: String? = nil, olderThanSeconds: Int64? = nil) {
        self.reason = reason
        self.id = id
        self.olderThanSeconds = olderThanSeconds
    }

    /// Whether `message` matches at `now` (seconds since the epoch).
    package func matches(_ message: ParkedMessage, now: Int64) -> Bool {
        if let reason, !(message.reason ?? "").hasPrefix(reason) { return false }
        if let id, message.jobID != id && message.messageID != id { return false }
        if let olderThanSeconds {
            guard let age = message.age(at: now), age >= olderThanSeconds else { return false }
        }
        return true
    }
}
