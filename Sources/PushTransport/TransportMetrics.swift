import Metrics
import Synchronization

/// A client's metrics, created once per client with bounded labels: status and documented reason only (an
/// undocumented reason is counted as `other`), never a token or a topic. Each provider's are named after it
/// (`apns_…`, `fcm_…`); the documentation below uses APNs'.
final class TransportMetrics: Sendable {
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
    private let provider: String

    private struct Key: Hashable {
        var status: String
        var reason: String
    }

    /// The provider whose client the metrics are: its name prefixes every metric.
    enum Provider: String, Sendable {
        case apns
        case fcm
        case webpush
    }

    /// Each metric's label is written out for each provider, so that what the code exports can be read from it (the
    /// dashboard's test does).
    init(provider: Provider) {
        self.provider = provider.rawValue
        switch provider {
        case .apns:
            connectionsOpen = Meter(label: "apns_connections_open")
            streamsInFlight = Meter(label: "apns_streams_in_flight")
            requestDuration = Metrics.Timer(label: "apns_request_duration_seconds", preferredDisplayUnit: .seconds)
            goAways = Counter(label: "apns_goaways_total")
            connectionsOpened = Counter(label: "apns_connections_opened_total")
            connectionsReplaced = Counter(label: "apns_connections_replaced_total")
            succeeded = Counter(label: "apns_requests_total", dimensions: [("status", "200"), ("reason", "")])
        case .fcm:
            connectionsOpen = Meter(label: "fcm_connections_open")
            streamsInFlight = Meter(label: "fcm_streams_in_flight")
            requestDuration = Metrics.Timer(label: "fcm_request_duration_seconds", preferredDisplayUnit: .seconds)
            goAways = Counter(label: "fcm_goaways_total")
            connectionsOpened = Counter(label: "fcm_connections_opened_total")
            connectionsReplaced = Counter(label: "fcm_connections_replaced_total")
            succeeded = Counter(label: "fcm_requests_total", dimensions: [("status", "200"), ("reason", "")])
        case .webpush:
            connectionsOpen = Meter(label: "webpush_connections_open")
            streamsInFlight = Meter(label: "webpush_streams_in_flight")
            requestDuration = Metrics.Timer(label: "webpush_request_duration_seconds", preferredDisplayUnit: .seconds)
            goAways = Counter(label: "webpush_goaways_total")
            connectionsOpened = Counter(label: "webpush_connections_opened_total")
            connectionsReplaced = Counter(label: "webpush_connections_replaced_total")
            succeeded = Counter(label: "webpush_requests_total", dimensions: [("status", "200"), ("reason", "")])
        }
    }

    /// Counts an answered request; `reason` is a documented reason or `other`, nil when the answer gave none.
    func record(status: Int, reason: String?) {
        if status == 200 {
            succeeded.increment()
            return
        }
        let reason = reason ?? ""
        let status = (100...599).contains(status) ? String(status) : "other"
        counter(Key(status: status, reason: reason)).increment()
    }

    /// Counts a request that got no answer, by transport error code.
    func record(_ error: TransportError) {
        counter(Key(status: "error", reason: error.code.description)).increment()
    }

    private func counter(_ key: Key) -> Counter {
        counters.withLock { counters in
            if let existing = counters[key] { return existing }
            let counter = Counter(
                label: "\(provider)_requests_total",
                dimensions: [("status", key.status), ("reason", key.reason)]
            )
            counters[key] = counter
            return counter
        }
    }
}
