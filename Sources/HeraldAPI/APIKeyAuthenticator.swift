import HeraldCore
import HeraldStore
import Hummingbird
import Synchronization

/// Checks `Authorization: Bearer <key>` against the stored key hashes, holds the key to its rate limit, and
/// records the key in the context. A missing or unknown key is a 401, a key over its rate (its own, or for a
/// register-only key without one the configured default) a 429 with `Retry-After`; whether the key's app and
/// scopes allow the route is each route's check (403).
struct APIKeyAuthenticator: RouterMiddleware {
    typealias Context = APIRequestContext
    let store: Store
    let limiter: KeyRateLimiter
    /// The rate of a register-only key that has none of its own.
    let registerRequestsPerSecond: Int
    /// Time for the rates.
    let clock: HeraldClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("missing API key: send Authorization: Bearer <key>")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError.unauthorized("the Authorization header must be Bearer <key>")
        }
        let secret = parts[1].trimmingSpaces()
        guard !secret.isEmpty, secret.utf8.count <= 256,
            let key = try await store.apiKey(forHash: APIKey.hash(String(secret)))
        else {
            throw APIError.unauthorized("invalid API key")
        }
        let rate = key.requestsPerSecond ?? (key.registersOnly ? registerRequestsPerSecond : nil)
        if let perSecond = rate, let wait = limiter.take(key: key.id, perSecond: perSecond, now: clock.now()) {
            throw APIError(
                .tooManyRequests, code: "rate_limited",
                "this API key is limited to \(perSecond) requests a second; try again in \(wait) s",
                retryAfter: wait)
        }
        var context = context
        context.authenticatedKey = key
        context.logger[metadataKey: "app"] = "\(key.app)"
        return try await next(request, context)
    }
}

/// Each API key's rate limit in this process: a token bucket per key holding one second's worth of requests, so
/// a key may burst up to its rate and is held to it over time.
final class KeyRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let buckets = Mutex<[Int64: Bucket]>([:])

    /// Takes one request from the key's bucket. Returns nil if the request may go ahead, else the whole seconds
    /// (at least 1) until it may.
    func take(key: Int64, perSecond: Int, now: ContinuousClock.Instant) -> Int? {
        let rate = Double(max(1, perSecond))
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: rate, updated: now)
            let elapsed = bucket.updated.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            bucket.tokens = min(rate, bucket.tokens + max(0, seconds) * rate)
            bucket.updated = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var view = self
        while view.first == " " || view.first == "\t" { view = view.dropFirst() }
        while view.last == " " || view.last == "\t" { view = view.dropLast() }
        return view
    }
}
