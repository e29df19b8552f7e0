import APNSCore
import HeraldCore
import HeraldStore
import Testing

@testable import HeraldWorker

/// Settlement over every documented APNs answer, at every in-process attempt and every batch attempt: what is
/// sent, pruned, failed, retried later or parked, and when the job stops. Pure: no services, no clock.
@Suite struct SettlementTests {
    static let token = DeviceToken(trustedHex: "ad853c203a9b0000")
    static let maximumBatchAttempts = 4
    static let policy = RetryPolicy()

    /// What an answer must come to, written down independently of `disposition(for:)`.
    enum Expected: Equatable {
        case pruned, transient, jobLevel
    }

    static func expected(_ reason: APNSReason) -> Expected {
        switch reason {
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken:
            .pruned
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout,
            .expiredProviderToken, .tooManyProviderTokenUpdates, .unrelatedKeyIdInToken:
            .transient
        default:
            .jobLevel
        }
    }

    static let cases: [(status: Int, reason: APNSReason, attempt: Int, batchAttempt: Int)] =
        APNSReason.documented.flatMap { answer in
            (1...policy.maximumAttempts).flatMap { attempt in
                (1...maximumBatchAttempts).map { (answer.status, answer.reason, attempt, $0) }
            }
        }

    @Test(arguments: cases)
    func everyDocumentedAnswerAtEveryAttempt(
        answer: (status: Int, reason: APNSReason, attempt: Int, batchAttempt: Int)
    ) {
        let outcome = APNSOutcome(
            status: answer.status, apnsID: nil, apnsUniqueID: nil,
            body: Array(#"{"reason":"\#(answer.reason.rawValue)","timestamp":1700000000000}"#.utf8))
        let decided = disposition(
            for: .answered(apns: outcome), attempt: answer.attempt, policy: Self.policy, jitter: 0)
        let plan = Settlement.plan(
            [DeviceResult(token: Self.token, disposition: decided, retries: answer.attempt - 1)],
            attempt: answer.batchAttempt, maximumAttempts: Self.maximumBatchAttempts)
        let lastBatch = answer.batchAttempt >= Self.maximumBatchAttempts
        switch Self.expected(answer.reason) {
        case .pruned:
            #expect(plan.prunes.map(\.reason) == [answer.reason.rawValue])
            // Only a 410 carries the timestamp the 410 rule compares against.
            #expect((plan.prunes.first?.apnsTimestamp != nil) == (answer.status == 410))
            #expect(plan.failures.isEmpty && plan.next == .nothing && plan.stop == nil)
            #expect(plan.tally == [Tally(outcome: .pruned, reason: answer.reason.rawValue): 1])
        case .transient:
            // In-process retries first (the sender's), then the retry queues, then parking after the last attempt.
            if answer.attempt < Self.policy.maximumAttempts {
                guard case .retry = decided else {
                    Issue.record("\(answer.reason) at attempt \(answer.attempt): \(decided)")
                    return
                }
            } else {
                #expect(decided == .exhausted(reason: answer.reason.rawValue))
            }
            #expect(plan.transient == [Self.token] && plan.transientReasons == answer.reason.rawValue)
            #expect(plan.stop == nil && plan.prunes.isEmpty)
            if lastBatch {
                #expect(plan.next == .park)
                #expect(
                    plan.failures.map(\.reason) == ["\(answer.reason.rawValue) (after \(answer.batchAttempt) attempts)"]
                )
                #expect(plan.tally == [Tally(outcome: .failed, reason: "exhausted"): 1])
            } else {
                #expect(plan.next == .retry(attempt: answer.batchAttempt + 1))
                #expect(plan.failures.isEmpty)
                // A device counts as retried once, when its first batch sends it to the retry queues.
                #expect(plan.retried == (answer.batchAttempt == 1 ? 1 : 0))
                #expect(plan.tally == [Tally(outcome: .retried, reason: "transient"): 1])
            }
        case .jobLevel:
            #expect(plan.stop == JobStop(reason: "APNs rejected the job: \(answer.reason)", isBreaker: false))
            #expect(plan.failures.map(\.reason) == [answer.reason.rawValue])
            #expect(plan.next == .nothing && plan.transient.isEmpty && plan.prunes.isEmpty)
        }
    }

    @Test func anUnknownReasonFallsBackOnItsStatusClass() {
        func plan(_ status: Int) -> SettlementPlan {
            let outcome = APNSOutcome(
                status: status, apnsID: nil, apnsUniqueID: nil, body: Array(#"{"reason":"SomethingNew"}"#.utf8))
            let decided = disposition(for: .answered(apns: outcome), attempt: 5, policy: Self.policy, jitter: 0)
            return Settlement.plan(
                [DeviceResult(token: Self.token, disposition: decided, retries: 4)], attempt: 1, maximumAttempts: 4)
        }
        #expect(plan(400).failures.map(\.reason) == ["SomethingNew"] && plan(400).stop == nil)
        #expect(plan(410).prunes.map(\.reason) == ["SomethingNew"])
        #expect(plan(503).next == .retry(attempt: 2))
        #expect(plan(413).stop?.isBreaker == false)
    }

    @Test func aMixedBatchIsCountedOncePerDeviceAndOutcome() {
        let tokens = (0..<6).map { DeviceToken(trustedHex: String(format: "%064x", $0)) }
        let results = [
            DeviceResult(token: tokens[0], disposition: .delivered, retries: 0),
            DeviceResult(token: tokens[1], disposition: .delivered, retries: 2),
            DeviceResult(token: tokens[2], disposition: .prune(reason: .unregistered, timestamp: 5), retries: 0),
            DeviceResult(token: tokens[3], disposition: .failDevice(reason: ProviderReason(rawValue: "X")), retries: 0),
            DeviceResult(token: tokens[4], disposition: .exhausted(reason: "ServiceUnavailable"), retries: 4),
            DeviceResult(token: tokens[5], disposition: .exhausted(reason: "TooManyRequests"), retries: 4),
        ]
        let plan = Settlement.plan(results, attempt: 1, maximumAttempts: 4)
        #expect(plan.sent == 2 && plan.prunes.count == 1 && plan.failures.count == 1)
        #expect(plan.transient == [tokens[4], tokens[5]])
        #expect(plan.transientReasons == "ServiceUnavailable, TooManyRequests")
        #expect(plan.retried == 2 && plan.next == .retry(attempt: 2))
        #expect(
            plan.tally == [
                Tally(outcome: .sent, reason: ""): 2, Tally(outcome: .pruned, reason: "Unregistered"): 1,
                Tally(outcome: .failed, reason: "X"): 1, Tally(outcome: .retried, reason: "transient"): 2,
            ])
        var writeBack = WriteBack(jobID: "j", app: "a")
        writeBack.add(plan)
        #expect(writeBack.sent == 2 && writeBack.retried == 2 && writeBack.prunes.count == 1)
    }

    @Test func aStoppedJobRetriesNothingAndItsUnsentDevicesCountAsStopped() {
        let tokens = (0..<3).map { DeviceToken(trustedHex: String(format: "%064x", $0)) }
        let plan = Settlement.plan(
            [
                DeviceResult(token: tokens[0], disposition: .failJob(reason: .badTopic), retries: 0),
                DeviceResult(token: tokens[1], disposition: .failJob(reason: StopFlag.stopped), retries: 0),
                DeviceResult(token: tokens[2], disposition: .exhausted(reason: "ServiceUnavailable"), retries: 4),
            ], attempt: 1, maximumAttempts: 4)
        #expect(plan.stop == JobStop(reason: "APNs rejected the job: BadTopic", isBreaker: false))
        #expect(plan.next == .nothing && plan.transient.isEmpty && plan.retried == 0)
        #expect(plan.failures.map(\.reason) == ["BadTopic", "JobStopped", "ServiceUnavailable"])
        #expect(plan.tally[Tally(outcome: .failed, reason: "job_stopped")] == 1)
    }

    @Test func theBreakerHoldsSuspectAnswersButNotUnregistered() {
        let tokens = (0..<3).map { DeviceToken(trustedHex: String(format: "%064x", $0)) }
        let results = [
            DeviceResult(token: tokens[0], disposition: .prune(reason: .badDeviceToken, timestamp: nil), retries: 0),
            DeviceResult(
                token: tokens[1], disposition: .prune(reason: .deviceTokenNotForTopic, timestamp: nil), retries: 0),
            DeviceResult(token: tokens[2], disposition: .prune(reason: .unregistered, timestamp: 9), retries: 0),
        ]
        let held = Settlement.plan(results, attempt: 1, maximumAttempts: 4, holdPrunes: true, breakerStop: "tripped")
        #expect(held.prunes.map(\.reason) == ["Unregistered"])
        #expect(
            held.failures.map(\.reason) == [
                "BadDeviceToken (not pruned: breaker)", "DeviceTokenNotForTopic (not pruned: breaker)",
            ])
        #expect(held.suspectAnswers == 2)
        #expect(held.stop == JobStop(reason: "tripped", isBreaker: true))
        let pruned = Settlement.plan(results, attempt: 1, maximumAttempts: 4)
        #expect(pruned.prunes.count == 3 && pruned.suspectAnswers == 2 && pruned.stop == nil)
    }

    @Test func unprovenDevicesSuspectAnswersArePrunedAndLeftOutOfTheBreakersCount() {
        let tokens = (0..<4).map { DeviceToken(trustedHex: String(format: "%064x", $0)) }
        let results = [
            DeviceResult(token: tokens[0], disposition: .prune(reason: .badDeviceToken, timestamp: nil), retries: 0),
            DeviceResult(token: tokens[1], disposition: .prune(reason: .badDeviceToken, timestamp: nil), retries: 0),
            DeviceResult(token: tokens[2], disposition: .delivered, retries: 0),
            DeviceResult(token: tokens[3], disposition: .delivered, retries: 0),
        ]
        // Device 0 was made up by a register key (unproven), device 1 is the backend's.
        let plan = Settlement.plan(
            results, attempt: 1, maximumAttempts: 4, unproven: [tokens[0].hex, tokens[2].hex],
            recordsDeliveries: true)
        #expect(plan.prunes.map(\.token) == [tokens[0], tokens[1]])
        #expect(plan.suspectAnswers == 1 && plan.unprovenAnswers == 1)
        #expect(plan.delivered == [tokens[2], tokens[3]])
        #expect(plan.stop == nil)
        // Without recording (small jobs), no deliveries are listed.
        #expect(Settlement.plan(results, attempt: 1, maximumAttempts: 4).delivered.isEmpty)
    }
}
