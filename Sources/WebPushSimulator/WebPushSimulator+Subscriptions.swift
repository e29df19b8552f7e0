import Crypto
import Foundation

extension WebPushSimulator {
    /// A push subscription as the browser would hand it to the page: what a sender needs, while the simulator keeps
    /// the private key.
    public struct Subscription: Sendable, Hashable {
        /// The id in the endpoint's path.
        public var id: String
        /// `https://<endpointHost>:<port><pathPrefix><id>`.
        public var endpoint: String
        /// `keys.p256dh`: base64url (unpadded) of the 65-byte uncompressed P-256 public key.
        public var p256dh: String
        /// `keys.auth`: base64url (unpadded) of the 16-byte auth secret.
        public var auth: String

        /// Creates a subscription value.
        public init(id: String, endpoint: String, p256dh: String, auth: String) {
            self.id = id
            self.endpoint = endpoint
            self.p256dh = p256dh
            self.auth = auth
        }

        /// `PushSubscription.toJSON()`: `{"endpoint":…,"expirationTime":null,"keys":{"p256dh":…,"auth":…}}`.
        public var json: String {
            let object: [String: Any] = [
                "endpoint": endpoint, "expirationTime": NSNull(), "keys": ["p256dh": p256dh, "auth": auth],
            ]
            let data = try! JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// Makes a subscription with a fresh P-256 key and 16-byte auth secret and keeps both; call after ``start()`` so
    /// that the endpoint names the bound port.
    ///
    /// - Parameters:
    ///   - id: the id in the endpoint's path (base64url characters); nil makes a random one.
    ///   - applicationServerKey: the VAPID public key (base64url) the page subscribed with; when set, a message whose
    ///     `k` differs is answered 400 `VapidPkHashMismatch`.
    public func makeSubscription(id: String? = nil, applicationServerKey: String? = nil) -> Subscription {
        let privateKey = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        let auth = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let keys = SimulatorState.Keys(
            privateKey: privateKey, auth: auth, applicationServerKey: applicationServerKey.flatMap(Base64URL.decode))
        let chosen = state.withLock { state in
            var chosen = id ?? Self.randomID()
            while id == nil && state.contains(chosen) { chosen = Self.randomID() }
            state.add(keys, id: chosen)
            return chosen
        }
        return subscription(id: chosen, privateKey: privateKey, auth: auth)
    }

    /// Adds a subscription with known keys (the demo seeds deterministic ones; tests use RFC 8291's), replacing any
    /// with that id, and returns it as a browser would hand it out.
    @discardableResult
    public func addSubscription(
        id: String, privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8], applicationServerKey: String? = nil
    ) -> Subscription {
        let keys = SimulatorState.Keys(
            privateKey: privateKey, auth: auth, applicationServerKey: applicationServerKey.flatMap(Base64URL.decode))
        state.withLock { $0.add(keys, id: id) }
        return subscription(id: id, privateKey: privateKey, auth: auth)
    }

    /// Forgets the subscription's keys: its endpoint answers 410 `Unregistered` from now on, as after the user
    /// revoked permission.
    public func unsubscribe(id: String) {
        state.withLock { $0.unsubscribe(id) }
    }

    /// The endpoint of subscription `id`.
    public func endpoint(id: String) -> String {
        origin + configuration.pathPrefix + id
    }

    private func subscription(id: String, privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]) -> Subscription {
        Subscription(
            id: id, endpoint: endpoint(id: id), p256dh: Base64URL.encode(privateKey.publicKey.x963Representation),
            auth: Base64URL.encode(auth))
    }

    /// 22 random base64url characters, as opaque as a real service's.
    private static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
