import APNSCore
import FCMCore
import WebPushCore

extension BatchMessage {
    /// The most tokens a batch message may list (a batch is at most `--batch-size` devices).
    public static let maximumTokens = PreparedJob.maximumListedRecipients
    /// The highest attempt number a batch message may carry.
    public static let maximumAttempt = 100

    /// Checks a batch message read from the broker: batches come back from the retry queues and could have been
    /// published by anyone with access to the queue, so nothing in one is trusted. Every field must fit where it
    /// lands (the batches table's integer columns, token comparisons, the APNs request path).
    public func validate() throws(JobError) {
        if let app { try JobLimits.text(app, field: "app", maximum: JobLimits.appCharacters) }
        try JobLimits.text(job, field: "job", maximum: JobLimits.idCharacters)
        try JobLimits.range(Int64(seq), 0...JobLimits.integerColumn.upperBound, field: "seq")
        try JobLimits.range(Int64(attempt), 1...Int64(Self.maximumAttempt), field: "attempt")
        for (field, bound) in [("after", after), ("through", through)] {
            // An empty bound is the planner's "no devices": it matches nothing.
            if let bound, !bound.isEmpty, !Self.isCanonicalToken(bound) {
                throw JobError(.malformed, "not a batch: \(field) is not a device token")
            }
        }
        if let tokens {
            guard tokens.count <= Self.maximumTokens else {
                throw JobError(.outOfBounds, "tokens has \(tokens.count) entries, over \(Self.maximumTokens)")
            }
            for (index, token) in tokens.enumerated() where !Self.isCanonicalToken(token) {
                throw JobError(.malformed, "not a batch: tokens.\(index) is not a device token")
            }
        } else if through == nil {
            throw JobError(.malformed, "not a batch: it has neither tokens nor a range")
        }
        if let notBefore {
            try JobLimits.range(notBefore, 0...253_402_300_799_999, field: "not_before")  // up to the year 9999, in ms
        }
    }

    /// A token as Herald stores and sends it: lowercase hex of even length within APNs' limit (iOS), an FCM
    /// registration token or installation id (Android), or a push subscription's endpoint (web).
    static func isCanonicalToken(_ text: String) -> Bool {
        (try? DeviceToken(parsing: text))?.hex == text || (try? FCMTarget(token: text)) != nil
            || (try? FCMTarget(fid: text)) != nil || (try? WebPushEndpoint(text)) != nil
    }
}
