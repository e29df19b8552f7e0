import APNSCore
import HeraldCore
import HeraldTestSupport
import Testing

@Suite struct DispositionTests {
    /// Every reason APNS.md lists, with what the pipeline must do about it.
    static let table: [(Int, APNSReason, String)] = [
        (400, .badCollapseId, "failJob"), (400, .badDeviceToken, "prune"), (400, .badExpirationDate, "failJob"),
        (400, .badMessageId, "failJob"), (400, .badPriority, "failJob"), (400, .badTopic, "failJob"),
        (400, .deviceTokenNotForTopic, "prune"), (400, .duplicateHeaders, "failJob"), (400, .idleTimeout, "retry"),
        (400, .invalidPushType, "failJob"), (400, .missingDeviceToken, "failJob"), (400, .missingTopic, "failJob"),
        (400, .payloadEmpty, "failJob"), (400, .topicDisallowed, "failJob"),
        (403, .badCertificate, "failJob"), (403, .badCertificateEnvironment, "failJob"),
        (403, .expiredProviderToken, "retry"), (403, .forbidden, "failJob"), (403, .invalidProviderToken, "failJob"),
        (403, .missingProviderToken, "failJob"), (403, .unrelatedKeyIdInToken, "retry"),
        (403, .badEnvironmentKeyIdInToken, "failJob"), (403, .badEnvironmentKeyInToken, "failJob"),
        (404, .badPath, "failJob"), (405, .methodNotAllowed, "failJob"),
        (410, .expiredToken, "prune"), (410, .unregistered, "prune"),
        (413, .payloadTooLarge, "failJob"),
        (429, .tooManyProviderTokenUpdates, "retry"), (429, .tooManyRequests, "retry"),
        (500, .internalServerError, "retry"), (503, .serviceUnavailable, "retry"), (503, .shutdown, "retry"),
    ]

    static func kind(_ disposition: Disposition) -> String {
        switch disposition {
        case .delivered: "delivered"
        case .prune: "prune"
        case .retry: "retry"
        case .exhausted: "exhausted"
        case .failDevice: "failDevice"
        case .failJob: "failJob"
        }
    }

    @Test func tableCoversEveryDocumentedReason() {
        #expect(Set(Self.table.map(\.1)) == Set(APNSReason.documented.map(\.reason)))
    }

    @Test(arguments: table)
    func everyDocumentedReasonHasItsDisposition(status: Int, reason: APNSReason, expected: String) {
        let outcome = APNSOutcome(status: status, reason: reason, timestamp: status == 410 ? 1_700_000_000_000 : nil)
        #expect(Self.kind(disposition(for: .answered(apns: outcome), attempt: 1)) == expected)
    }

    @Test(arguments: table.filter { $0.2 == "retry" })
    func transientReasonsAreExhaustedAfterTheLastAttempt(status: Int, reason: APNSReason, expected: String) {
        let policy = RetryPolicy(maximumAttempts: 3)
        let outcome = APNSOutcome(status: status, reason: reason)
        #expect(Self.kind(disposition(for: .answered(apns: outcome), attempt: 3, policy: policy)) == "exhausted")
    }

    @Test func successIsDelivered() {
        #expect(disposition(for: .answered(apns: APNSOutcome(status: 200)), attempt: 1) == .delivered)
    }

    @Test func unregisteredKeepsItsTimestamp() {
        let outcome = APNSOutcome(status: 410, reason: .unregistered, timestamp: 1234)
        #expect(
            disposition(for: .answered(apns: outcome), attempt: 1) == .prune(reason: .unregistered, timestamp: 1234))
    }

    @Test func badDeviceTokenPrunesWithoutTimestamp() {
        let outcome = APNSOutcome(status: 400, reason: .badDeviceToken, timestamp: 99)
        #expect(
            disposition(for: .answered(apns: outcome), attempt: 1) == .prune(reason: .badDeviceToken, timestamp: nil))
    }

    @Test func transportFailuresAreRetriedPromptlyWithTheirOwnBoundedBackoff() {
        // An answer's retries follow maximumAttempts and baseDelay; a lost connection's follow transportAttempts and
        // transportDelay (short: the request goes to another connection), capped by maximumDelay.
        let policy = RetryPolicy(
            maximumAttempts: 2, baseDelay: .milliseconds(100), maximumDelay: .milliseconds(250), transportAttempts: 4,
            transportDelay: .milliseconds(50))
        #expect(
            disposition(for: .transportFailure("timeout"), attempt: 1, policy: policy, jitter: 1)
                == .retry(reason: "timeout", delay: .milliseconds(50)))
        #expect(
            disposition(for: .transportFailure("timeout"), attempt: 3, policy: policy, jitter: 1)
                == .retry(reason: "timeout", delay: .milliseconds(200)))
        #expect(
            disposition(for: .transportFailure("timeout"), attempt: 4, policy: policy) == .exhausted(reason: "timeout"))
        let unavailable = APNSOutcome(status: 503, reason: .serviceUnavailable)
        #expect(
            disposition(for: .answered(apns: unavailable), attempt: 2, policy: policy)
                == .exhausted(reason: "ServiceUnavailable"))
    }

    @Test(arguments: [(400, "failDevice"), (410, "prune"), (429, "retry"), (502, "retry"), (403, "failJob")])
    func unknownReasonsFallBackOnTheirStatus(status: Int, expected: String) {
        let outcome = APNSOutcome(status: status, reason: APNSReason(rawValue: "SomethingNew"))
        #expect(Self.kind(disposition(for: .answered(apns: outcome), attempt: 1)) == expected)
    }

    /// The seam: a provider's own table (here a made-up one, in the shape of FCM's error codes) decides what its
    /// answers mean; backoff, attempts and `Retry-After` are the same for every provider.
    struct CodeTable: SettlementTable {
        var provider: String { "Made-up" }

        func verdict(on answer: ProviderAnswer) -> Verdict {
            if answer.isSuccess { return .delivered }
            switch answer.reason?.rawValue {
            case "UNREGISTERED": return .prune
            case "QUOTA_EXCEEDED", "UNAVAILABLE": return .transient
            case "THIRD_PARTY_AUTH_ERROR": return .failJob
            default: return .failDevice
            }
        }
    }

    @Test func anotherProvidersTableDecidesItsAnswers() {
        let table = CodeTable()
        func answer(_ status: Int, _ code: String?, retryAfter: Duration? = nil) -> DeliveryResult {
            .answered(
                ProviderAnswer(
                    status: status, reason: code.map { ProviderReason(rawValue: $0) }, retryAfter: retryAfter))
        }
        #expect(disposition(for: answer(200, nil), attempt: 1, table: table) == .delivered)
        #expect(
            disposition(for: answer(404, "UNREGISTERED"), attempt: 1, table: table)
                == .prune(reason: ProviderReason(rawValue: "UNREGISTERED"), timestamp: nil))
        #expect(
            disposition(for: answer(401, "THIRD_PARTY_AUTH_ERROR"), attempt: 1, table: table)
                == .failJob(reason: ProviderReason(rawValue: "THIRD_PARTY_AUTH_ERROR")))
        #expect(
            disposition(for: answer(400, nil), attempt: 1, table: table)
                == .failDevice(reason: ProviderReason(rawValue: "HTTP400")))
        // APNs' table would call the same 404 a job-level failure: the table, not the status, decides.
        #expect(
            disposition(for: answer(404, "UNREGISTERED"), attempt: 1)
                == .failJob(reason: ProviderReason(rawValue: "UNREGISTERED")))
    }

    @Test func aTransientAnswerWaitsAtLeastItsRetryAfter() {
        let policy = RetryPolicy(maximumAttempts: 3, baseDelay: .milliseconds(200), maximumDelay: .seconds(30))
        let quota = ProviderAnswer(
            status: 429, reason: ProviderReason(rawValue: "QUOTA_EXCEEDED"), retryAfter: .seconds(45))
        // Longer than the backoff's ceiling: the provider's wait.
        #expect(
            disposition(for: .answered(quota), attempt: 1, policy: policy, jitter: 1, table: CodeTable())
                == .retry(reason: "QUOTA_EXCEEDED", delay: .seconds(45)))
        // Shorter than the backoff: the backoff.
        var soon = quota
        soon.retryAfter = .milliseconds(1)
        #expect(
            disposition(for: .answered(soon), attempt: 2, policy: policy, jitter: 1, table: CodeTable())
                == .retry(reason: "QUOTA_EXCEEDED", delay: .milliseconds(400)))
        // Out of attempts: exhausted, whatever the provider asked.
        #expect(
            disposition(for: .answered(quota), attempt: 3, policy: policy, jitter: 1, table: CodeTable())
                == .exhausted(reason: "QUOTA_EXCEEDED"))
    }
}
