import APNSCore
import Foundation
import HeraldCore
import PushTransport

/// What sending needs of a push provider's client, in terms that name no provider: a transport batch whose answers
/// are taken as they arrive, one request at a time, and the provider's table of answers. Each provider's client is
/// one (`APNSClient`, APNSTransport+Notification.swift; FCM's next, issue 36) with requests of its own; the worker's
/// fast tests use a fake. A class: a group's requests go out as one transport batch per client, told apart by
/// identity.
protocol NotificationTransport<Request>: AnyObject, Sendable {
    /// One notification to one device, as this provider's client takes it.
    associatedtype Request: Sendable

    /// Sends `count` requests (`request(i)`; nil: not sent), at most `concurrency` at once, calling `onAnswer` as
    /// each answer arrives; returns every answer in order (nil for one not sent).
    func transportAll(
        count: Int,
        concurrency: Int,
        request: @escaping @Sendable (Int) -> Request?,
        onAnswer: @escaping @Sendable (Int, Result<ProviderAnswer, TransportFailure>) -> Void
    ) async -> [Result<ProviderAnswer, TransportFailure>?]

    /// Sends one request.
    func transport(_ request: Request) async throws(TransportFailure) -> ProviderAnswer

    /// What this provider's answers mean.
    var settlement: any SettlementTable { get }
}

/// No answer from the provider (a timeout, a lost connection, a refused stream), by the transport's code for it:
/// retried promptly, on whichever connection the client hands the request to next.
struct TransportFailure: Error, Sendable, Hashable {
    let code: String
}

/// Sending: requests to answers over a provider's client, the first request of each share alone (the probe), transient
/// failures retried briefly in-process. Knows nothing of PostgreSQL or the broker; what the answers mean for the
/// job is `Settlement`'s.
struct Sender: Sendable {
    /// Requests in flight at most, over the client's connections.
    var concurrency: Int
    var policy: RetryPolicy
    var metrics: WorkerMetrics
    /// Time and chance: the retry delays' waits, their jitter, and the latency's end.
    var clock: HeraldClock = .system

    /// One job's share of a transport batch, over one provider's requests.
    struct Share<Requests: RequestSource>: Sendable {
        var requests: Requests
        var range: Range<Int>
        var stop: StopFlag
        /// When the producer published the job (ms since 1970).
        var publishedAt: Int64

        /// The share's first `count` requests.
        func prefix(_ count: Int) -> Share {
            var share = self
            share.range = range.lowerBound..<min(range.lowerBound + count, range.upperBound)
            return share
        }

        /// The share without its first `count` requests.
        func dropFirst(_ count: Int) -> Share {
            var share = self
            share.range = range.dropFirst(count)
            return share
        }
    }

    /// Sends the shares as two transport batches: each share's first request, then the rest of each share whose
    /// job was not stopped by its first answer. A job APNs rejects as a whole (bad topic, credentials, payload)
    /// costs one request per batch, not a batch's worth of concurrent ones. Returns each share's results, in order.
    func sendProbingFirst<Requests>(
        _ shares: [Share<Requests>], through client: any NotificationTransport<Requests.Request>
    ) async -> [[DeviceResult]] {
        let firsts = await sendShares(shares.map { $0.prefix(1) }, through: client)
        var rests = await sendShares(shares.map { $0.dropFirst(1) }.filter { !$0.range.isEmpty }, through: client)[...]
        return zip(shares, firsts).map { share, first in
            share.range.count > 1 ? first + rests.removeFirst() : first
        }
    }

    /// Sends the shares' requests through `client` as one transport batch (answers taken on the event loop, no
    /// task per notification), then retries transient failures in-process with jittered backoff. Returns each
    /// share's results, in order. A share whose job stops (rejected as a whole) sends nothing more.
    func sendShares<Requests>(
        _ shares: [Share<Requests>], through client: any NotificationTransport<Requests.Request>
    ) async -> [[DeviceResult]] {
        // Flat index -> (share, index in its request list).
        var owners: [(share: Int, index: Int)] = []
        owners.reserveCapacity(shares.reduce(0) { $0 + $1.range.count })
        for (number, share) in shares.enumerated() {
            for index in share.range { owners.append((number, index)) }
        }
        let locate = owners
        let policy = self.policy
        let table = client.settlement
        let answers = await client.transportAll(
            count: locate.count,
            concurrency: concurrency,
            request: { flat in
                let (number, index) = locate[flat]
                // Not sent once the job is known rejected as a whole (the probe, another batch, or this one).
                return shares[number].stop.isSet ? nil : shares[number].requests[index]
            },
            onAnswer: { flat, answer in
                // As answers arrive: the latency of delivered ones, and a job-level rejection stops the job's rest.
                let share = shares[locate[flat].share]
                let result = DeliveryResult(answer)
                if result.isSuccess {
                    recordLatency(publishedAt: share.publishedAt)
                } else if case .failJob = disposition(for: result, attempt: 1, policy: policy, jitter: 0, table: table)
                {
                    share.stop.set()
                }
            }
        )
        var results = shares.map { share -> [DeviceResult] in
            var results: [DeviceResult] = []
            results.reserveCapacity(share.range.count)
            return results
        }
        var retries: [(flat: Int, delay: Duration)] = []
        for (flat, answer) in answers.enumerated() {
            let (number, index) = locate[flat]
            let token = shares[number].requests.tokens[index]
            guard let answer else {
                // Not sent: the job stopped.
                results[number].append(
                    DeviceResult(token: token, disposition: .failJob(reason: StopFlag.stopped), retries: 0))
                continue
            }
            let result = DeliveryResult(answer)
            let decided = disposition(
                for: result, attempt: 1, policy: policy, jitter: result.isSuccess ? 0 : clock.random(0...1),
                table: table)
            if case .retry(_, let delay) = decided, delay <= Self.longestWaitInProcess { retries.append((flat, delay)) }
            results[number].append(DeviceResult(token: token, disposition: decided, retries: 0))
        }
        guard !retries.isEmpty else { return results }
        let retried = await withTaskGroup(of: (Int, DeviceResult).self) { group in
            var running = 0
            var collected: [(Int, DeviceResult)] = []
            for (flat, delay) in retries {
                if running == concurrency, let done = await group.next() {
                    collected.append(done)
                    running -= 1
                }
                running += 1
                group.addTask {
                    try? await clock.sleep(delay)
                    let share = shares[locate[flat].share]
                    let index = locate[flat].index
                    let result = await sendOne(
                        share.requests[index], to: share.requests.tokens[index], through: client, stop: share.stop,
                        publishedAt: share.publishedAt, from: 2)
                    return (flat, result)
                }
            }
            for await done in group { collected.append(done) }
            return collected
        }
        for (flat, result) in retried {
            let (number, index) = locate[flat]
            results[number][index - shares[number].range.lowerBound] = result
        }
        return results
    }

    /// One notification with brief in-process retries of transient failures; a wait longer than
    /// ``longestWaitInProcess`` (a provider's `Retry-After`) is not waited here: the result says when to retry, and
    /// the batch's retry goes through the delay queues, holding no worker.
    func sendOne<Request: Sendable>(
        _ request: Request,
        to token: DeviceToken,
        through client: any NotificationTransport<Request>,
        stop: StopFlag,
        publishedAt: Int64,
        from firstAttempt: Int = 1
    ) async -> DeviceResult {
        var attempt = firstAttempt
        while true {
            if stop.isSet {
                return DeviceResult(
                    token: token, disposition: .failJob(reason: StopFlag.stopped), retries: attempt - 1)
            }
            let result: DeliveryResult
            do {
                result = .answered(try await client.transport(request))
            } catch {
                result = .transportFailure(error.code)
            }
            // The jitter only matters for a retry; drawing it for every success cost a getrandom call each.
            let decided = disposition(
                for: result, attempt: attempt, policy: policy, jitter: result.isSuccess ? 0 : clock.random(0...1),
                table: client.settlement)
            switch decided {
            case .retry(_, let delay) where delay <= Self.longestWaitInProcess:
                try? await clock.sleep(delay)
                attempt += 1
                continue
            case .failJob:
                stop.set()
            case .delivered:
                recordLatency(publishedAt: publishedAt)
            default:
                break
            }
            return DeviceResult(token: token, disposition: decided, retries: attempt - 1)
        }
    }

    /// The longest wait a retry takes in-process. A provider that asks for more (`Retry-After` on FCM's
    /// QUOTA_EXCEEDED or 503) gets its wait through the delay queues, like a throttled batch.
    static let longestWaitInProcess: Duration = .seconds(2)

    /// End-to-end latency of a delivered notification: from the producer's publish to APNs' answer.
    func recordLatency(publishedAt: Int64) {
        let elapsed = clock.unixMilliseconds - publishedAt
        metrics.latency.recordMilliseconds(max(elapsed, 0))
    }
}
