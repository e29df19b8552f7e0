import Crypto
import Foundation

/// Message encryption for Web Push: RFC 8291 over RFC 8188's `aes128gcm` content coding, in one record.
///
/// Every call to ``encrypt(_:for:paddingTo:)`` makes a fresh P-256 key pair and a fresh 16-byte salt (never the
/// VAPID key), derives the content key and nonce from the subscription's `p256dh` and `auth`, and returns the whole
/// request body: the 86-byte header (salt, record size 4096, key id length 65, the fresh public key) followed by the
/// AES-128-GCM ciphertext of `plaintext ‖ 0x02 ‖ padding` and its 16-byte tag. The body is at most
/// ``maximumBodySize`` bytes, what every push service accepts.
public enum WebPushEncryption {
    /// The largest body every push service takes (RFC 8030 asks for at least 4,096 bytes; the big ones stop there).
    public static let maximumBodySize = 4096
    /// The `aes128gcm` header: salt (16), record size (4), key id length (1), key id (65).
    public static let headerSize = 86
    /// The largest plaintext that fits: 4,096 − 86 (header) − 16 (tag) − 1 (delimiter) = 3,993 bytes.
    public static let maximumPlaintextSize = maximumBodySize - headerSize - tagSize - 1
    /// The record size written in the header: one record of any size that fits the body.
    public static let recordSize = 4096

    static let tagSize = 16
    static let saltSize = 16
    static let publicKeySize = 65
    static let keyInfoPrefix: [UInt8] = Array("WebPush: info".utf8) + [0]
    static let contentKeyInfo: [UInt8] = Array("Content-Encoding: aes128gcm".utf8) + [0, 1]
    static let nonceInfo: [UInt8] = Array("Content-Encoding: nonce".utf8) + [0, 1]

    /// Encrypts `plaintext` for one subscription with a fresh key pair and salt.
    ///
    /// - Parameters:
    ///   - plaintext: the payload (at most ``maximumPlaintextSize`` bytes).
    ///   - keys: the subscription's keys.
    ///   - paddingTo: when set, the body is padded with zeros to this many bytes (at most ``maximumBodySize``), so
    ///     that the push service cannot tell payloads apart by size; a plaintext that needs more is not padded.
    /// - Returns: the request body (`Content-Encoding: aes128gcm`).
    /// - Throws: ``WebPushEncryptionError`` naming the sizes when the plaintext does not fit or the padding target is
    ///   out of range; never the plaintext or a key.
    public static func encrypt(_ plaintext: [UInt8], for keys: WebPushKeys, paddingTo: Int? = nil)
        throws(WebPushEncryptionError) -> [UInt8]
    {
        var generator = SystemRandomNumberGenerator()
        var salt = [UInt8]()
        salt.reserveCapacity(saltSize)
        for _ in 0..<(saltSize / 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { salt.append(contentsOf: $0) }
        }
        return try encrypt(
            plaintext, for: keys, serverKey: ephemeralKey(using: &generator), salt: salt, paddingTo: paddingTo)
    }

    /// A fresh P-256 key pair for one message: a uniformly random scalar in 1…n−1 (32 bytes from the system's
    /// cryptographic source; the rare value past the group order, or zero, which swift-crypto refuses, is drawn
    /// again), its public point computed by BoringSSL. `P256.KeyAgreement.PrivateKey()` runs BoringSSL's FIPS
    /// pairwise test (an ECDSA signature and its verification) on every key it makes: 56 µs a key against 5 µs here,
    /// half of a message's encryption.
    static func ephemeralKey(using generator: inout SystemRandomNumberGenerator) -> P256.KeyAgreement.PrivateKey {
        var scalar = [UInt8]()
        scalar.reserveCapacity(32)
        while true {
            scalar.removeAll(keepingCapacity: true)
            for _ in 0..<4 { withUnsafeBytes(of: generator.next() as UInt64) { scalar.append(contentsOf: $0) } }
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) { return key }
        }
    }

    /// Encrypts with the given application server key pair and salt: RFC 8291's worked example and tests. Production
    /// code calls ``encrypt(_:for:paddingTo:)``, which never reuses either.
    package static func encrypt(
        _ plaintext: [UInt8], for keys: WebPushKeys, serverKey: P256.KeyAgreement.PrivateKey, salt: [UInt8],
        paddingTo: Int? = nil
    ) throws(WebPushEncryptionError) -> [UInt8] {
        guard plaintext.count <= maximumPlaintextSize else {
            throw WebPushEncryptionError(
                .plaintextTooLarge,
                "the payload is \(plaintext.count) bytes; at most \(maximumPlaintextSize) fit in a \(maximumBodySize)-"
                    + "byte Web Push body")
        }
        precondition(salt.count == saltSize, "the salt must be 16 bytes")
        let unpadded = headerSize + plaintext.count + 1 + tagSize
        var bodySize = unpadded
        if let paddingTo {
            guard paddingTo <= maximumBodySize else {
                throw WebPushEncryptionError(
                    .paddingOutOfRange, "padding to \(paddingTo) bytes; a body is at most \(maximumBodySize) bytes")
            }
            bodySize = max(unpadded, paddingTo)
        }
        let userAgentKey: P256.KeyAgreement.PublicKey
        do {
            userAgentKey = try P256.KeyAgreement.PublicKey(x963Representation: keys.p256dh)
        } catch {
            throw WebPushEncryptionError(.invalidKey, "the subscription's p256dh is not a P-256 public key")
        }
        let serverPublic = serverKey.publicKey.x963Representation
        let (contentKey, nonce) = try deriveKeys(
            serverKey: serverKey, peer: userAgentKey, userAgentPublic: keys.p256dh, serverPublic: serverPublic,
            auth: keys.auth, salt: salt)

        var record = [UInt8]()
        record.reserveCapacity(bodySize - headerSize - tagSize)
        record.append(contentsOf: plaintext)
        record.append(0x02)
        if bodySize > unpadded { record.append(contentsOf: repeatElement(0, count: bodySize - unpadded)) }

        let sealed: AES.GCM.SealedBox
        do {
            sealed = try AES.GCM.seal(record, using: contentKey, nonce: nonce)
        } catch {
            throw WebPushEncryptionError(.cryptoFailure, "AES-128-GCM sealing failed")
        }

        var body = [UInt8]()
        body.reserveCapacity(bodySize)
        body.append(contentsOf: salt)
        appendBigEndian(UInt32(recordSize), to: &body)
        body.append(UInt8(publicKeySize))
        body.append(contentsOf: serverPublic)
        body.append(contentsOf: sealed.ciphertext)
        body.append(contentsOf: sealed.tag)
        return body
    }

    /// Decrypts a body made by ``encrypt(_:for:paddingTo:)`` (or any RFC 8291 sender) with the user agent's private
    /// key and authentication secret, as a browser does: for tests, the simulator and tools.
    ///
    /// - Returns: the plaintext without delimiter and padding.
    /// - Throws: ``WebPushEncryptionError`` when the body is malformed, spans more than one record, or does not
    ///   authenticate.
    public static func decrypt(_ body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8])
        throws(WebPushEncryptionError) -> [UInt8]
    {
        guard body.count >= 21 else {
            throw WebPushEncryptionError(.malformedBody, "the body is \(body.count) bytes, shorter than a header")
        }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { ($0 << 8) | Int($1) }
        let idLength = Int(body[20])
        let headerLength = 21 + idLength
        guard idLength == publicKeySize, body.count >= headerLength + tagSize + 1 else {
            throw WebPushEncryptionError(
                .malformedBody, "the header's key id is \(idLength) bytes (65 expected) or the body is too short")
        }
        guard recordSize >= 18, body.count - headerLength <= recordSize else {
            throw WebPushEncryptionError(
                .malformedBody,
                "the record size is \(recordSize) for \(body.count - headerLength) bytes of records; Web Push allows "
                    + "one record")
        }
        guard auth.count == 16 else {
            throw WebPushEncryptionError(.invalidKey, "the authentication secret is \(auth.count) bytes; it must be 16")
        }
        let serverPublic = Array(body[21..<headerLength])
        let serverKey: P256.KeyAgreement.PublicKey
        do {
            serverKey = try P256.KeyAgreement.PublicKey(x963Representation: serverPublic)
        } catch {
            throw WebPushEncryptionError(.malformedBody, "the header's key id is not a P-256 public key")
        }
        let userAgentPublic = Array(privateKey.publicKey.x963Representation)
        let (contentKey, nonce) = try deriveKeys(
            serverKey: privateKey, peer: serverKey, userAgentPublic: userAgentPublic, serverPublic: serverPublic,
            auth: auth, salt: salt)
        var record: [UInt8]
        do {
            let sealed = try AES.GCM.SealedBox(
                nonce: nonce, ciphertext: body[headerLength..<(body.count - tagSize)],
                tag: body[(body.count - tagSize)...])
            record = Array(try AES.GCM.open(sealed, using: contentKey))
        } catch {
            throw WebPushEncryptionError(
                .decryptionFailed, "the body does not authenticate with this key and secret")
        }
        while let last = record.last, last == 0 { record.removeLast() }
        guard record.last == 0x02 else {
            throw WebPushEncryptionError(.malformedBody, "the record does not end with the last-record delimiter 0x02")
        }
        record.removeLast()
        return record
    }

    /// RFC 8291 section 3.4 and RFC 8188 section 2.2: the content encryption key and nonce. `serverKey` is the local
    /// private key (the application server's when encrypting, the user agent's when decrypting), `peer` the other
    /// side's public key; the key info always names the user agent's key first.
    private static func deriveKeys(
        serverKey: P256.KeyAgreement.PrivateKey, peer: P256.KeyAgreement.PublicKey, userAgentPublic: [UInt8],
        serverPublic: some DataProtocol, auth: [UInt8], salt: [UInt8]
    ) throws(WebPushEncryptionError) -> (SymmetricKey, AES.GCM.Nonce) {
        let shared: SharedSecret
        do {
            shared = try serverKey.sharedSecretFromKeyAgreement(with: peer)
        } catch {
            throw WebPushEncryptionError(.cryptoFailure, "the P-256 key agreement failed")
        }
        var keyInfo = [UInt8]()
        keyInfo.reserveCapacity(keyInfoPrefix.count + 2 * publicKeySize + 1)
        keyInfo.append(contentsOf: keyInfoPrefix)
        keyInfo.append(contentsOf: userAgentPublic)
        keyInfo.append(contentsOf: serverPublic)
        keyInfo.append(1)
        // HKDF-Expand to 32 bytes or fewer is one HMAC over `info ‖ 0x01`: written out, it saves the general
        // expander's copies on every message.
        let secretPRK = shared.withUnsafeBytes { secret in
            HMAC<SHA256>.authenticationCode(for: secret, using: SymmetricKey(data: auth))
        }
        let inputKeyMaterial = HMAC<SHA256>.authenticationCode(for: keyInfo, using: SymmetricKey(data: secretPRK))
        let prk = inputKeyMaterial.withUnsafeBytes { bytes in
            HMAC<SHA256>.authenticationCode(for: bytes, using: SymmetricKey(data: salt))
        }
        let prkKey = SymmetricKey(data: prk)
        let contentKey = HMAC<SHA256>.authenticationCode(for: contentKeyInfo, using: prkKey)
        let nonceBytes = HMAC<SHA256>.authenticationCode(for: nonceInfo, using: prkKey)
        do {
            let nonce = try AES.GCM.Nonce(data: Array(nonceBytes).prefix(12))
            return (SymmetricKey(data: Array(contentKey).prefix(16)), nonce)
        } catch {
            throw WebPushEncryptionError(.cryptoFailure, "the nonce could not be made")
        }
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 24))
        bytes.append(UInt8(truncatingIfNeeded: value >> 16))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }
}

/// Why a message could not be encrypted or decrypted. Names sizes and rules, never the payload or a key.
public struct WebPushEncryptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The plaintext is over ``WebPushEncryption/maximumPlaintextSize``.
        case plaintextTooLarge
        /// `paddingTo` is over ``WebPushEncryption/maximumBodySize``.
        case paddingOutOfRange
        /// A key is not usable (not a P-256 point, a secret of the wrong length).
        case invalidKey
        /// The body is not one `aes128gcm` record with a P-256 key id.
        case malformedBody
        /// The body does not authenticate with the given key and secret.
        case decryptionFailed
        /// The cryptographic library failed (not expected with valid keys).
        case cryptoFailure
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for logs and reports.
    public let description: String

    package init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
