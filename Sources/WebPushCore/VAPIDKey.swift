import Crypto
import Foundation

/// An application server's VAPID key (RFC 8292): the P-256 key pair that signs the tokens, whose public half the web
/// app passed to `pushManager.subscribe` as `applicationServerKey`.
///
/// Subscriptions are bound to it: keep it for their life (another key strands every subscription made with this one).
/// `description` shows only ``keyID``.
public struct VAPIDKey: Sendable, CustomStringConvertible {
    let privateKey: P256.Signing.PrivateKey

    /// The public key, 65 bytes uncompressed (`0x04 ‖ X ‖ Y`).
    public let publicKey: [UInt8]
    /// The public key in unpadded base64url: what the web app passes to `pushManager.subscribe`, and the `k=` of
    /// every `Authorization` header.
    public let applicationServerKey: String
    /// A short, stable fingerprint of the public key (base64url of the first 8 bytes of its SHA-256, 11 characters):
    /// safe to log and to store with each subscription to tell which key it was made with.
    public let keyID: String

    /// Loads a key from the text of a PEM file: SEC1 (`-----BEGIN EC PRIVATE KEY-----`, what `openssl ecparam
    /// -genkey` writes, with or without its `EC PARAMETERS` block) or PKCS#8 (`-----BEGIN PRIVATE KEY-----`), P-256
    /// only.
    ///
    /// - Throws: ``VAPIDKeyError`` naming the problem (not PEM, encrypted, a public key, RSA, another curve); never any
    ///   of the key's text.
    public init(pem: String) throws(VAPIDKeyError) {
        let blocks = Self.pemLabels(pem)
        guard !blocks.isEmpty else {
            throw VAPIDKeyError("the key file is not PEM: it has no -----BEGIN …----- line")
        }
        let keyLabels = ["EC PRIVATE KEY", "PRIVATE KEY"]
        guard let label = blocks.first(where: { keyLabels.contains($0) }) else {
            if blocks.contains("ENCRYPTED PRIVATE KEY") {
                throw VAPIDKeyError(
                    "the key is encrypted (ENCRYPTED PRIVATE KEY); store it unencrypted in PKCS#8 or SEC1 PEM")
            }
            if blocks.contains("PUBLIC KEY") || blocks.contains("CERTIFICATE") {
                throw VAPIDKeyError("the PEM holds a public key or certificate; VAPID needs the private key")
            }
            if blocks.contains("RSA PRIVATE KEY") {
                throw VAPIDKeyError("the key is RSA; VAPID needs an EC P-256 private key")
            }
            throw VAPIDKeyError(
                "the PEM holds no private key (found \(blocks.joined(separator: ", "))); expected EC PRIVATE KEY or "
                    + "PRIVATE KEY")
        }
        guard let block = Self.pemBlock(pem, label: label) else {
            throw VAPIDKeyError("the \(label) block has no matching -----END \(label)----- line")
        }
        if let curve = Self.otherCurve(inPEMBlock: block) {
            throw VAPIDKeyError("the key is on curve \(curve); VAPID needs P-256 (prime256v1)")
        }
        do {
            self.init(privateKey: try P256.Signing.PrivateKey(pemRepresentation: block))
        } catch {
            throw VAPIDKeyError(
                "the \(label) block is not a P-256 private key (another algorithm or curve, or damaged base64)")
        }
    }

    /// The name of the curve a key names when it is not P-256 (swift-crypto takes any 32-byte scalar as P-256,
    /// secp256k1's included), or nil when it names P-256 or no curve.
    private static func otherCurve(inPEMBlock block: String) -> String? {
        let base64 = block.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: base64).map(Array.init) else { return nil }
        let prime256v1: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        let primeCurves: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01]
        let secCurves: [UInt8] = [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00]
        if contains(der, prime256v1) { return nil }
        if let index = firstIndex(of: secCurves, in: der), index + secCurves.count < der.count {
            switch der[index + secCurves.count] {
            case 0x0A: return "secp256k1"
            case 0x22: return "P-384"
            case 0x23: return "P-521"
            default: return "another SEC curve"
            }
        }
        if contains(der, primeCurves) { return "another prime curve" }
        return nil
    }

    private static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        firstIndex(of: pattern, in: bytes) != nil
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    /// A key already in memory.
    public init(privateKey: P256.Signing.PrivateKey) {
        self.privateKey = privateKey
        self.publicKey = Array(privateKey.publicKey.x963Representation)
        self.applicationServerKey = Base64URL.encode(publicKey)
        self.keyID = Base64URL.encode(SHA256.hash(data: publicKey).prefix(8))
    }

    /// A new random key (for `herald webpush generate-key`, tests and the demo).
    public static func generate() -> VAPIDKey {
        VAPIDKey(privateKey: P256.Signing.PrivateKey())
    }

    /// The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), to write to a key file. Secret: never log it.
    public var pem: String { privateKey.pemRepresentation }

    /// `VAPIDKey(<keyID>)`: safe to log.
    public var description: String { "VAPIDKey(\(keyID))" }

    /// The labels of the PEM blocks in `text`, in order (`EC PARAMETERS`, `EC PRIVATE KEY`, …).
    private static func pemLabels(_ text: String) -> [String] {
        var labels = [String]()
        var rest = Substring(text)
        while let begin = rest.range(of: "-----BEGIN ") {
            let afterBegin = rest[begin.upperBound...]
            guard let close = afterBegin.range(of: "-----") else { break }
            labels.append(String(afterBegin[afterBegin.startIndex..<close.lowerBound].prefix(40)))
            rest = afterBegin[close.upperBound...]
        }
        return labels
    }

    /// The one block labelled `label`, from its BEGIN line to its END line, with line ends made `\n`.
    private static func pemBlock(_ text: String, label: String) -> String? {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        let begin = "-----BEGIN \(label)-----"
        let end = "-----END \(label)-----"
        guard let start = normalized.range(of: begin),
            let finish = normalized.range(of: end, range: start.upperBound..<normalized.endIndex)
        else { return nil }
        let body = normalized[start.upperBound..<finish.lowerBound]
            .split(whereSeparator: { $0 == "\n" || $0 == " " || $0 == "\t" })
            .joined()
        // Lines of 64 characters, as the PEM parser expects.
        var lines = [begin]
        var index = body.startIndex
        while index < body.endIndex {
            let next = body.index(index, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[index..<next]))
            index = next
        }
        lines.append(end)
        return lines.joined(separator: "\n")
    }
}

/// A VAPID key that could not be loaded; the message names the problem, never any of the key's text.
public struct VAPIDKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The problem.
    public let description: String

    init(_ description: String) { self.description = description }
}
