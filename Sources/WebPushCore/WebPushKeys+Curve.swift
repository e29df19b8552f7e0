import Crypto

extension WebPushKeys {
    /// Whether `bytes` (65, uncompressed) is a point on P-256: what swift-crypto accepts as a key agreement public
    /// key.
    static func isP256Point(_ bytes: [UInt8]) -> Bool {
        (try? P256.KeyAgreement.PublicKey(x963Representation: bytes)) != nil
    }
}
