import RabbitMQ
import Testing

@Suite struct ReconnectPolicyTests {
    @Test func delaysDoubleFromTheInitialDelayUpToTheMaximum() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1), jitter: 0)
        let delays = (1...7).map { policy.delay(beforeAttempt: $0, random: 0.5) }
        #expect(
            delays == [100, 200, 400, 800, 1000, 1000, 1000].map { Duration.milliseconds($0) })
    }

    @Test(arguments: [(0.0, 50), (0.5, 75), (0.999_999, 100)])
    func jitterTakesAtMostItsShareOffTheDelay(random: Double, expectedMilliseconds: Int64) {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), jitter: 0.5)
        #expect(policy.delay(beforeAttempt: 1, random: random) == .milliseconds(expectedMilliseconds))
    }

    @Test func hugeAttemptNumbersStayAtTheMaximum() {
        let policy = ReconnectPolicy(maximumDelay: .seconds(30), jitter: 0)
        #expect(policy.delay(beforeAttempt: 10_000, random: 0) == .seconds(30))
    }
}
