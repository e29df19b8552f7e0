/// An OAuth 2.0 access token for FCM sends, with when it was obtained and when it expires.
///
/// Its `description` never shows the token: only its lifetime.
public struct FCMAccessToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The bearer token (`ya29.…`). Never logged.
    public let value: String
    /// When it was received, in seconds since 1970.
    public let obtainedAt: Int64
    /// When it stops working, in seconds since 1970.
    public let expiresAt: Int64

    /// Wraps a token received at `obtainedAt` that expires at `expiresAt` (seconds since 1970).
    public init(value: String, obtainedAt: Int64, expiresAt: Int64) {
        self.value = value
        self.obtainedAt = obtainedAt
        self.expiresAt = expiresAt
    }

    /// The `Authorization` header value: `Bearer <token>`.
    public var authorization: String { "Bearer " + value }

    /// When a cache should replace it: `margin` seconds before expiry, but never before half of its lifetime has
    /// passed (so that a short-lived token with a large margin does not cause a mint on every call).
    public func refreshesAt(margin: Int64) -> Int64 {
        max(expiresAt - margin, obtainedAt + (expiresAt - obtainedAt) / 2)
    }

    public var description: String { "FCMAccessToken(obtained: \(obtainedAt), expires: \(expiresAt))" }
    public var debugDescription: String { description }
}
