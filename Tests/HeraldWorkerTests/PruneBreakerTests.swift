import APNSCore
import HeraldCore
import Testing

@testable import HeraldWorker

/// The prune breaker's decision over every kind of answer, at the defaults (share 0.5, at least 20 answers).
@Suite struct PruneBreakerTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var delivered = 0
        var bad = 0
        var notForTopic = 0
        var unregistered = 0
        var transient = 0
        var stopped = 0
        var earlier: (answers: Int, suspect: Int) = (0, 0)
        var trips: Bool

        var testDescription: String { name }

        var dispositions: [Disposition] {
            Array(repeating: .delivered, count: delivered)
                + Array(repeating: .prune(reason: .badDeviceToken, timestamp: nil), count: bad)
                + Array(repeating: .prune(reason: .deviceTokenNotForTopic, timestamp: nil), count: notForTopic)
                + Array(repeating: .prune(reason: .unregistered, timestamp: 1), count: unregistered)
                + Array(repeating: .retry(reason: "503", delay: .zero), count: transient)
                + Array(repeating: .failJob(reason: StopFlag.stopped), count: stopped)
        }
    }

    static let cases: [Case] = [
        Case(name: "every answer BadDeviceToken", bad: 500, trips: true),
        Case(name: "every answer DeviceTokenNotForTopic", notForTopic: 500, trips: true),
        Case(name: "the two reasons together above half", delivered: 40, bad: 30, notForTopic: 31, trips: true),
        Case(name: "5% BadDeviceToken in a healthy job", delivered: 475, bad: 25, trips: false),
        Case(name: "exactly half is not above half", delivered: 50, bad: 50, trips: false),
        Case(name: "below the minimum answers", bad: 19, trips: false),
        Case(name: "at the minimum answers", bad: 20, trips: true),
        Case(name: "every answer 410 Unregistered", unregistered: 500, trips: false),
        Case(
            name: "transient failures and unsent devices are not answers", bad: 15, transient: 100, stopped: 100,
            trips: false),
        Case(
            name: "a few suspect answers after a bad start across batches", delivered: 2, bad: 3,
            earlier: (30, 28), trips: true),
        Case(
            name: "a few suspect answers in a healthy job across batches", delivered: 95, bad: 5,
            earlier: (10_000, 300), trips: false),
    ]

    @Test(arguments: cases) func theBreakerTripsOnlyWhenSuspectAnswersAreMoreThanTheShare(_ test: Case) {
        var counts = PruneBreaker.Counts(test.dispositions)
        counts.answers += test.earlier.answers
        counts.earlier = test.earlier.suspect
        #expect(PruneBreaker().trips(counts) == test.trips)
    }

    @Test func theReasonNamesTheCountsAndTheLikelyMistakeAndNoToken() {
        let counts = PruneBreaker.Counts(
            Array(repeating: Disposition.prune(reason: .badDeviceToken, timestamp: nil), count: 480)
                + Array(repeating: .delivered, count: 20))
        let reason = PruneBreaker.reason(counts)
        #expect(reason.contains("480 of 500"))
        #expect(reason.contains("BadDeviceToken 480"))
        #expect(reason.contains("wrong APNs environment or topic"))
        #expect(PruneBreaker(share: 0.99, minimumAnswers: 20).trips(counts) == false)
    }
}
