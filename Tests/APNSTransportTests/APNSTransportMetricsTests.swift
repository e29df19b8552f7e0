import APNSCore
import CoreMetrics
import HeraldTestSupport
import PushTransport
import Synchronization
import Testing

/// The client's metrics, asserted through a task-local factory (never a global bootstrap).
@Suite struct APNSTransportMetricsTests {
    @Test func requestsAreCountedByStatusAndReasonAndTimed() async throws {
        let metrics = RecordingMetricsFactory()
        try await withMetricsFactory(metrics) { () async throws -> Void in
            try await SimulatorFixture.with { simulator in
                simulator.badTokenPrefixes = ["bad0"]
            } _: { fixture in
                let accepted = try await fixture.client.send(makeRequest(token: "a1b2c3d4"))
                let rejected = try await fixture.client.send(makeRequest(token: "bad0c3d4"))
                #expect(accepted.status == 200)
                #expect(rejected.status == 400)
            }
        }
        #expect(metrics.counter("apns_requests_total", ["status": "200", "reason": ""]) == 1)
        #expect(metrics.counter("apns_requests_total", ["status": "400", "reason": "BadDeviceToken"]) == 1)
        #expect(metrics.timings("apns_request_duration_seconds") == 2)
        #expect(metrics.meterMaximum("apns_connections_open") == 1)
    }
}

/// A metrics backend that keeps counter totals, timer sample counts and meter maxima in memory.
final class RecordingMetricsFactory: MetricsFactory {
    private struct Key: Hashable {
        var label: String
        var dimensions: [String: String]
    }

    final class Handler: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler {
        private let state = Mutex<(total: Double, samples: Int, current: Double, maximum: Double)>((0, 0, 0, 0))
        var total: Double { state.withLock { $0.total } }
        var samples: Int { state.withLock { $0.samples } }
        var maximum: Double { state.withLock { $0.maximum } }

        func increment(by amount: Int64) { state.withLock { $0.total += Double(amount) } }
        func increment(by amount: Double) {
            state.withLock {
                $0.total += amount
                $0.current += amount
                $0.maximum = max($0.maximum, $0.current)
            }
        }
        func decrement(by amount: Double) { state.withLock { $0.current -= amount } }
        func set(_ value: Int64) { set(Double(value)) }
        func set(_ value: Double) {
            state.withLock {
                $0.current = value
                $0.maximum = max($0.maximum, value)
            }
        }
        func record(_ value: Int64) { state.withLock { $0.samples += 1 } }
        func record(_ value: Double) { state.withLock { $0.samples += 1 } }
        func recordNanoseconds(_ duration: Int64) { state.withLock { $0.samples += 1 } }
        func reset() { state.withLock { $0 = (0, 0, 0, 0) } }
    }

    private let handlers = Mutex<[Key: Handler]>([:])

    private func handler(_ label: String, _ dimensions: [(String, String)]) -> Handler {
        let key = Key(label: label, dimensions: Dictionary(dimensions, uniquingKeysWith: { $1 }))
        return handlers.withLock { handlers in
            if let existing = handlers[key] { return existing }
            let handler = Handler()
            handlers[key] = handler
            return handler
        }
    }

    func counter(_ label: String, _ dimensions: [String: String] = [:]) -> Double? {
        handlers.withLock { $0[Key(label: label, dimensions: dimensions)]?.total }
    }

    func timings(_ label: String) -> Int {
        handlers.withLock { $0.filter { $0.key.label == label }.values.reduce(0) { $0 + $1.samples } }
    }

    func meterMaximum(_ label: String) -> Double? {
        handlers.withLock { $0.first { $0.key.label == label }?.value.maximum }
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { handler(label, dimensions) }
    func makeFloatingPointCounter(
        label: String,
        dimensions: [(String, String)]
    ) -> any FloatingPointCounterHandler { handler(label, dimensions) }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { handler(label, dimensions) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        handler(label, dimensions)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { handler(label, dimensions) }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}
