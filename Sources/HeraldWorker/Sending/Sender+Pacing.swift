import APNSCore
import HeraldCore
import PushTransport

extension Sender {
    /// A throttled batch's turn: its sends go out at `rate` from `start`, when the turn it took begins. Paced from
    /// the turn, not from whenever the worker gets to them, so that a batch that starts late catches up inside its
    /// own turn instead of running into the next one's.
    struct Pacing: Sendable {
        let start: ContinuousClock.Instant
        let rate: Int
        /// Sends made so far, over every environment's share of the batch.
        var sent = 0

        /// When the next send is due.
        var due: ContinuousClock.Instant { start + .seconds(Double(sent) / Double(rate)) }
    }

    /// Sends one share with at most `concurrency` in flight, in chunks of a tenth of the rate paced by `pacing` if
    /// the batch is throttled; with `probing`, the first request goes alone either way (`sendProbingFirst`): a later
    /// slice of a batch is not probed again, its first slice was.
    func send<Requests>(
        _ share: Share<Requests>, through client: any NotificationTransport<Requests.Request>, pacing: inout Pacing?,
        probing: Bool = true
    ) async throws -> [DeviceResult] {
        guard var paced = pacing else { return await sendUnpaced(share, through: client, probing: probing) }
        defer { pacing = paced }
        var results: [DeviceResult] = []
        results.reserveCapacity(share.range.count)
        var rest = share
        var chunk = 1
        while !rest.range.isEmpty {
            try await clock.sleep(until: paced.due)
            let slice = rest.prefix(chunk)
            results += await sendShares([slice], through: client)[0]
            paced.sent += slice.range.count
            rest = rest.dropFirst(slice.range.count)
            chunk = max(1, min(paced.rate / 10, concurrency))
        }
        return results
    }

    /// Sends one share of a batch that no rate paces, its first request alone with `probing`.
    func sendUnpaced<Requests>(
        _ share: Share<Requests>, through client: any NotificationTransport<Requests.Request>, probing: Bool
    ) async -> [DeviceResult] {
        probing ? await sendProbingFirst([share], through: client)[0] : await sendShares([share], through: client)[0]
    }
}
