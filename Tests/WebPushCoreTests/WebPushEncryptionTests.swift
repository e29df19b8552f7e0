import Crypto
import Testing

@testable import WebPushCore

@Suite("Web Push encryption (RFC 8291, aes128gcm)")
struct WebPushEncryptionTests {
    // RFC 8291 section 5 and appendix A.
    enum RFC {
        static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
        static let userAgentPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let userAgentPublic =
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let serverPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let serverPublic =
            "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6"
            + "PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    static func bytes(_ base64url: String) throws -> [UInt8] { try #require(Base64URL.decode(base64url)) }

    static func freshSubscription() throws -> (P256.KeyAgreement.PrivateKey, WebPushKeys) {
        let privateKey = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return (privateKey, try WebPushKeys(p256dh: Array(privateKey.publicKey.x963Representation), auth: auth))
    }

    @Test("RFC 8291's worked example is reproduced byte for byte")
    func rfcVector() throws {
        let keys = try WebPushKeys(p256dh: RFC.userAgentPublic, auth: RFC.auth)
        let serverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(RFC.serverPrivate))
        #expect(Array(serverKey.publicKey.x963Representation) == (try Self.bytes(RFC.serverPublic)))
        let body = try WebPushEncryption.encrypt(
            RFC.plaintext, for: keys, serverKey: serverKey, salt: Self.bytes(RFC.salt))
        #expect(body == (try Self.bytes(RFC.body)))
        #expect(Base64URL.encode(body) == RFC.body)
    }

    @Test("the RFC's body decrypts with the user agent's private key")
    func rfcVectorDecrypts() throws {
        let userAgent = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(RFC.userAgentPrivate))
        let plaintext = try WebPushEncryption.decrypt(
            Self.bytes(RFC.body), privateKey: userAgent, auth: Self.bytes(RFC.auth))
        #expect(plaintext == RFC.plaintext)
    }

    @Test("a message encrypted for a fresh subscription decrypts to the same bytes", arguments: [0, 1, 41, 3993])
    func roundTrip(size: Int) throws {
        let (privateKey, keys) = try Self.freshSubscription()
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body = try WebPushEncryption.encrypt(plaintext, for: keys)
        #expect(body.count == WebPushEncryption.headerSize + size + 1 + 16)
        #expect(body.count <= WebPushEncryption.maximumBodySize)
        #expect(try WebPushEncryption.decrypt(body, privateKey: privateKey, auth: keys.auth) == plaintext)
    }

    @Test("the header holds a fresh salt, rs 4096, idlen 65 and a fresh public key; two bodies differ")
    func headerLayout() throws {
        let (privateKey, keys) = try Self.freshSubscription()
        let plaintext = Array("hello".utf8)
        let first = try WebPushEncryption.encrypt(plaintext, for: keys)
        let second = try WebPushEncryption.encrypt(plaintext, for: keys)
        #expect(WebPushEncryption.headerSize == 86)
        for body in [first, second] {
            #expect(Array(body[16..<20]) == [0x00, 0x00, 0x10, 0x00])
            #expect(body[20] == 65)
            let keyID = Array(body[21..<86])
            #expect(keyID.first == 0x04)
            #expect((try? P256.KeyAgreement.PublicKey(x963Representation: keyID)) != nil)
            #expect(keyID != keys.p256dh)
            #expect(keyID != Array(privateKey.publicKey.x963Representation))
        }
        #expect(first[0..<16] != second[0..<16], "each message has its own salt")
        #expect(first[21..<86] != second[21..<86], "each message has its own key pair")
        #expect(first[86...] != second[86...])
        #expect(try WebPushEncryption.decrypt(second, privateKey: privateKey, auth: keys.auth) == plaintext)
    }

    @Test("padding fills the body to the size asked and is removed on decryption")
    func padding() throws {
        let (privateKey, keys) = try Self.freshSubscription()
        let plaintext = Array(#"{"title":"Hi"}"#.utf8)
        let padded = try WebPushEncryption.encrypt(plaintext, for: keys, paddingTo: 4096)
        #expect(padded.count == 4096)
        #expect(try WebPushEncryption.decrypt(padded, privateKey: privateKey, auth: keys.auth) == plaintext)
        let small = try WebPushEncryption.encrypt(plaintext, for: keys, paddingTo: 10)
        #expect(small.count == 86 + plaintext.count + 17, "a target below the message's size adds nothing")
        let error = #expect(throws: WebPushEncryptionError.self) {
            try WebPushEncryption.encrypt(plaintext, for: keys, paddingTo: 4097)
        }
        #expect(error?.code == .paddingOutOfRange)
    }

    @Test("a plaintext over 3,993 bytes is refused with the sizes, never the contents")
    func tooLarge() throws {
        let (_, keys) = try Self.freshSubscription()
        #expect(WebPushEncryption.maximumPlaintextSize == 3993)
        let plaintext = Array(repeating: UInt8(ascii: "Q"), count: 3994)
        let error = #expect(throws: WebPushEncryptionError.self) {
            try WebPushEncryption.encrypt(plaintext, for: keys)
        }
        #expect(error?.code == .plaintextTooLarge)
        #expect(error?.description.contains("3994") == true)
        #expect(error?.description.contains("3993") == true)
        #expect(error?.description.contains("QQQQ") == false)
    }

    @Test("a body for another key, or altered, does not decrypt")
    func wrongKeyOrTampered() throws {
        let (privateKey, keys) = try Self.freshSubscription()
        let (otherKey, _) = try Self.freshSubscription()
        var body = try WebPushEncryption.encrypt(Array("secret".utf8), for: keys)
        #expect(throws: WebPushEncryptionError.self) {
            try WebPushEncryption.decrypt(body, privateKey: otherKey, auth: keys.auth)
        }
        body[body.count - 1] ^= 0x01
        let error = #expect(throws: WebPushEncryptionError.self) {
            try WebPushEncryption.decrypt(body, privateKey: privateKey, auth: keys.auth)
        }
        #expect(error?.code == .decryptionFailed)
        #expect(throws: WebPushEncryptionError.self) {
            try WebPushEncryption.decrypt(Array(body.prefix(40)), privateKey: privateKey, auth: keys.auth)
        }
    }
}

@Suite("Web Push ephemeral keys")
struct WebPushEphemeralKeyTests {
    @Test("each message's key is fresh and a valid P-256 key")
    func freshKeys() throws {
        var generator = SystemRandomNumberGenerator()
        let keys = (0..<64).map { _ in WebPushEncryption.ephemeralKey(using: &generator) }
        #expect(Set(keys.map { Array($0.rawRepresentation) }).count == keys.count)
        let peer = P256.KeyAgreement.PrivateKey()
        for key in keys.prefix(4) {
            let ours = try key.sharedSecretFromKeyAgreement(with: peer.publicKey)
            let theirs = try peer.sharedSecretFromKeyAgreement(with: key.publicKey)
            #expect(ours == theirs)
        }
    }
}
