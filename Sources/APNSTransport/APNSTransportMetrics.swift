import APNSCore
import Metrics
import Synchronization

/// The client's metrics, created once per client with bounded labels: status and documented reason only (an
/// undocumented reason is counted as `other`), never a token or a topic.
final class APNSTransportMetrics: Sendable {
    /// `apns_connections_open`: connections with a running HTTP/2 session.
    let connectionsOpen: Meter
    /// `apns_streams_in_flight`: requests sent and not yet answered.
    let streamsInFlight: Meter
    /// `apns_request_duration_seconds`: from `send` to its answer or failure, retries included.
    let requestDuration: Metrics.Timer
    /// `apns_goaways_total`: GOAWAY frames received.
    let goAways: Counter
    /// `apns_connections_opened_total`: HTTP/2 sessions established — reconnects show as its rate.
    let connectionsOpened: Counter
    /// `apns_connections_replaced_total`: connections retired by the client (UnrelatedKeyIdInToken, timeouts).
    let connectionsReplaced: Counter
    /// `apns_requests_total{status="200",reason=""}`, the common case, kept apart from the dictionary.
    private let succeeded: Counter
    private let counters = Mutex<[Key: Counter]>([:])

    private struct Key: Hashable {
        var status: String
        var reason: String
    }

    init() {
        connectionsOpen = Meter(label: "apns_connections_open")
        streamsInFlight = Meter(label: "apns_streams_in_flight")
        requestDuration = Metrics.Timer(label: "apns_request_duration_seconds", preferredDisplayUnit: .seconds)
        goAways = Counter(label: "apns_goaways_total")
        connectionsOpened = Counter(label: "apns_connections_opened_total")
        connectionsReplaced = Counter(label: "apns_connections_replaced_total")
        succeeded = Counter(label: "apns_requests_total", dimensions: [("status", "200"), ("reason", "")])
    }

    /// Counts an answered request.
    func record(_ outcome: APNSOutcome) {
        if outcome.status == 200 {
            succeeded.increment()
            return
        }
        let reason = outcome.reason.map { $0.isKnown ? $0.rawValue : "other" } ?? ""
        let status = (100...599).contains(outcome.status) ? String(outcome.status) : "other"
        counter(Key(status: status, reason: reason)).increment()
    }

    /// Counts a request that got no answer, by transport error code.
    func record(_ error: APNSTransportError) {
        counter(Key(status: "error", reason: error.code.description)).increment()
    }

    private func counter(_ key: Key) -> Counter {
        counters.withLock { counters in
            if let existing = counters[key] { return existing }
            let counter = Counter(
                label: "apns_requests_total",
                dimensions: [("status", key.status), ("reason", key.reason)]
            )
            counters[key] = counter
            return counter
        }
    }
}
