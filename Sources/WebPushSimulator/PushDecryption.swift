import Crypto
import Foundation

/// RFC 8291 `aes128gcm` decryption of one push message body for one subscription, written from the RFC (and
/// RFC 8188 for the record layout) without any of the sender's code.
///
/// Body = `salt` (16) ‖ `rs` (uint32 big-endian) ‖ `idlen` (1, must be 65) ‖ `keyid` (the sender's ephemeral P-256
/// public key, uncompressed) ‖ one record (ciphertext ‖ 16-byte tag). `rs` is at least 18 and the record fits in it;
/// a second record is refused (RFC 8291 allows only one). The record's plaintext is the payload, the last-record
/// delimiter 0x02 and zero padding.
enum PushDecryption {
    /// Why a body did not decrypt: the sentence recorded with the message.
    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The parsed header of an `aes128gcm` body.
    struct Header {
        var salt: [UInt8]
        var recordSize: UInt32
        var senderPublicKey: [UInt8]
        /// The record: ciphertext with its tag.
        var record: ArraySlice<UInt8>
    }

    static let headerLength = 86
    static let tagLength = 16

    /// Splits the body into header fields and the record, checking sizes only (no cryptography).
    static func parse(_ body: [UInt8]) throws(Failure) -> Header {
        guard body.count >= 21 else { throw Failure("the body is shorter than an aes128gcm header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let idLength = Int(body[20])
        guard idLength == 65 else { throw Failure("idlen is \(idLength), not 65 (an uncompressed P-256 key)") }
        guard body.count >= headerLength else { throw Failure("the body ends inside the keyid") }
        guard recordSize >= 18 else { throw Failure("rs is \(recordSize), below the minimum of 18") }
        let record = body[headerLength...]
        guard record.count > tagLength else { throw Failure("the record is shorter than its tag and delimiter") }
        guard record.count <= Int(recordSize) else {
            throw Failure("the record (\(record.count) bytes) exceeds rs (\(recordSize)): more than one record")
        }
        return Header(
            salt: salt, recordSize: recordSize, senderPublicKey: Array(body[21..<headerLength]), record: record)
    }

    /// Decrypts `body` with the subscription's private key and auth secret; returns the payload without delimiter
    /// and padding.
    static func decrypt(
        _ body: [UInt8], privateKey: P256.KeyAgreement.PrivateKey, auth: [UInt8]
    ) throws(Failure) -> [UInt8] {
        let header = try parse(body)
        let senderKey: P256.KeyAgreement.PublicKey
        do {
            senderKey = try P256.KeyAgreement.PublicKey(x963Representation: header.senderPublicKey)
        } catch {
            throw Failure("the keyid is not a P-256 public key")
        }
        let ecdhSecret: SharedSecret
        do {
            ecdhSecret = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        } catch {
            throw Failure("ECDH with the keyid failed")
        }
        let receiverPublicKey = Array(privateKey.publicKey.x963Representation)
        // IKM = HKDF(salt = auth, ikm = ecdh_secret, info = "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public, 32)
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublicKey + header.senderPublicKey
        let ikm = ecdhSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        // CEK and NONCE = HKDF(salt = salt, ikm = IKM, info = "Content-Encoding: aes128gcm|nonce" ‖ 0x00)
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: header.salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonceKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: ikm, salt: header.salt, info: Array("Content-Encoding: nonce".utf8) + [0],
            outputByteCount: 12)
        let recordPlaintext: [UInt8]
        do {
            let nonce = try AES.GCM.Nonce(data: nonceKey.withUnsafeBytes { Array($0) })
            let box = try AES.GCM.SealedBox(
                nonce: nonce, ciphertext: header.record.dropLast(tagLength), tag: header.record.suffix(tagLength))
            recordPlaintext = Array(try AES.GCM.open(box, using: contentKey))
        } catch {
            throw Failure("AES-128-GCM authentication failed (wrong keys, auth secret or key derivation)")
        }
        return try unpad(recordPlaintext)
    }

    /// The payload before the last-record delimiter (0x02) and its zero padding.
    static func unpad(_ recordPlaintext: [UInt8]) throws(Failure) -> [UInt8] {
        guard let delimiter = recordPlaintext.lastIndex(where: { $0 != 0 }) else {
            throw Failure("the record has no padding delimiter")
        }
        switch recordPlaintext[delimiter] {
        case 2: return Array(recordPlaintext[..<delimiter])
        case 1: throw Failure("the record's delimiter is 0x01 (not the last record): RFC 8291 allows one record")
        default: throw Failure("the record's delimiter is \(recordPlaintext[delimiter]), not 0x02")
        }
    }
}
