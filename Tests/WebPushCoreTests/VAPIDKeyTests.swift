import Crypto
import Testing

@testable import WebPushCore

@Suite("VAPID keys and subjects")
struct VAPIDKeyTests {
    // A test-only key made with `openssl ecparam -name prime256v1 -genkey -noout`, its PKCS#8 form
    // (`openssl pkcs8 -topk8 -nocrypt`) and its public key in base64url as openssl derives it.
    static let sec1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIKJPNmmUd+/Q4PZMZDwb8QfguPxKvsjjRnup35k1NchvoAoGCCqGSM49
        AwEHoUQDQgAEWT7pmVpY6vnMuI9XhKjkpmfivUYppEv2aprUdpJI8H55RxbaE9zI
        C4LZvYPvN9a7O8wYtTLujl2KnQnVXIvaAA==
        -----END EC PRIVATE KEY-----

        """
    static let pkcs8 = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgok82aZR379Dg9kxk
        PBvxB+C4/Eq+yONGe6nfmTU1yG+hRANCAARZPumZWljq+cy4j1eEqOSmZ+K9Rimk
        S/ZqmtR2kkjwfnlHFtoT3MgLgtm9g+831rs7zBi1Mu6OXYqdCdVci9oA
        -----END PRIVATE KEY-----

        """
    static let applicationServerKey =
        "BFk-6ZlaWOr5zLiPV4So5KZn4r1GKaRL9mqa1HaSSPB-eUcW2hPcyAuC2b2D7zfWuzvMGLUy7o5dip0J1VyL2gA"
    // A test-only P-384 key (`openssl ecparam -name secp384r1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt`).
    static let p384 = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDCWsjomo9jsKuYTGaeB
        u/WpTX6AnQ28F10URKxTD37PZh5/6cVuClCdVrtgfFBh6U2hZANiAAQsKDWNdNma
        5POXOb/tq36F5YubtdXlKHMKjfFmDjVO3J1GdZhxmHBNA8otGPtXi485sTSC0IFt
        24IKkfcu0fXTi7+BqhxB9Iat/7MpLNRhWZerkxgk855r4+QZDOUyg7w=
        -----END PRIVATE KEY-----
        """

    // A test-only secp256k1 key (`openssl ecparam -name secp256k1 -genkey -noout`): a 32-byte scalar like P-256's.
    static let secp256k1 = """
        -----BEGIN EC PRIVATE KEY-----
        MHQCAQEEIFGxIRUnN2lxcRtoZnl6U8IqOp2I26+JVb4eV7JY8Z02oAcGBSuBBAAK
        oUQDQgAE0BHpOaaYt2Db/pW7P34c0d0YYcWL6BCxrEGNSFiaBXT4Saca2zsw0hCv
        s2Ft6cLqvaQa7mW4D3HH9t8e7jo8AQ==
        -----END EC PRIVATE KEY-----
        """

    static let forms: [(String, String)] = [
        ("SEC1", sec1),
        (
            "SEC1 after openssl's EC PARAMETERS block",
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + sec1
        ),
        ("PKCS#8", pkcs8),
        ("PKCS#8 with CRLF line ends", pkcs8.replacingOccurrences(of: "\n", with: "\r\n")),
    ]

    @Test("a P-256 key loads from SEC1 and PKCS#8 PEM", arguments: forms)
    func loads(form: (String, String)) throws {
        let key = try VAPIDKey(pem: form.1)
        #expect(key.applicationServerKey == Self.applicationServerKey, "\(form.0)")
        #expect(key.publicKey.count == 65)
        #expect(key.publicKey.first == 0x04)
        #expect(Base64URL.encode(key.publicKey) == key.applicationServerKey)
        let digest = Array(SHA256.hash(data: key.publicKey))
        #expect(key.keyID == Base64URL.encode(digest.prefix(8)))
        #expect(key.keyID.count == 11)
        #expect("\(key)" == "VAPIDKey(\(key.keyID))")
    }

    @Test("pem writes PKCS#8 that loads back to the same key")
    func pemRoundTrip() throws {
        let key = VAPIDKey.generate()
        #expect(key.pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try VAPIDKey(pem: key.pem)
        #expect(again.publicKey == key.publicKey)
        #expect(again.keyID == key.keyID)
        #expect(VAPIDKey.generate().keyID != key.keyID)
    }

    static let broken: [(String, String, String)] = [
        ("", "not PEM", "empty"),
        ("MHcCAQEEIKJPNmmUd+/Q4PZMZDwb8QfguPxKvsjjRnup35k1NchvoAoGCCqGSM49", "not PEM", "bare base64"),
        (p384, "P-384", "P-384 key"),
        (secp256k1, "secp256k1", "secp256k1 key"),
        (
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAh\n"
                + "-----END ENCRYPTED PRIVATE KEY-----\n", "encrypted", "encrypted"
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
                + "-----END RSA PRIVATE KEY-----\n", "RSA", "RSA"
        ),
        (
            "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEWT7pmVpY6vnMuI9XhKjkpmfivUYp\n"
                + "-----END PUBLIC KEY-----\n", "public key", "public key"
        ),
        (
            pkcs8.replacingOccurrences(
                of: "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEH", with: "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEX"),
            "another prime curve", "a P-256-sized key naming another curve"
        ),
        (
            pkcs8.replacingOccurrences(
                of: "PBvxB+C4/Eq+yONGe6nfmTU1yG+hRANCAARZPumZWljq+cy4j1eEqOSmZ+K9Rimk\n", with: ""),
            "not a P-256 private key", "damaged"
        ),
        (
            pkcs8.replacingOccurrences(of: "-----END PRIVATE KEY-----", with: ""), "no matching -----END",
            "no END line"
        ),
    ]

    @Test("a key that is not P-256 is refused with the problem named and none of its text", arguments: broken)
    func refused(input: (String, String, String)) {
        let error = #expect(throws: VAPIDKeyError.self, "\(input.2)") { try VAPIDKey(pem: input.0) }
        let description = error?.description ?? ""
        #expect(description.contains(input.1), "\(input.2): \(description)")
        let base64Lines = input.0.split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("-----") }
        for line in base64Lines {
            #expect(!description.contains(line.prefix(16)), "\(input.2) leaks key text")
        }
    }

    static let subjects: [(String, String?)] = [
        ("mailto:ops@example.com", nil),
        ("MAILTO:ops@example.com", nil),
        ("mailto:push-ops+herald@mail.example.co.uk", nil),
        ("https://example.com", nil),
        ("https://example.com/contact?x=1", nil),
        ("https://push.example.com:8443/", nil),
        ("", "empty"),
        ("ops@example.com", "bare address"),
        ("mailto: ops@example.com", "space"),
        ("mailto:<ops@example.com>", "angle brackets"),
        ("mailto:Ops Team <ops@example.com>", "space"),
        ("mailto:ops@localhost", "localhost"),
        ("mailto:ops@push.localhost", "localhost"),
        ("mailto:ops@example", "dot"),
        ("mailto:ops@.com", "dot"),
        ("mailto:", "no address"),
        ("mailto:@example.com", "local@domain"),
        ("mailto:a@b@example.com", "local@domain"),
        ("mailto:ops@example.com?subject=push", "query"),
        ("mailto:ops@exa_mple.com", "letters, digits"),
        ("http://example.com", "https, not http"),
        ("https://", "with a host"),
        ("https:///contact", "with a host"),
        ("https://user@example.com", "with a host"),
        ("urn:example:contact", "mailto: or https://"),
        ("mailto:ops@example.com\n", "control"),
        (String(repeating: "a", count: 600), "at most 512"),
    ]

    @Test("subjects follow Apple's rules, and the error names the rule", arguments: subjects)
    func subject(entry: (String, String?)) throws {
        if let rule = entry.1 {
            let error = #expect(throws: VAPIDSubjectError.self, "\(entry.0)") { try VAPIDSubject(entry.0) }
            #expect(error?.description.contains(rule) == true, "\(entry.0): \(error?.description ?? "")")
        } else {
            let subject = try VAPIDSubject(entry.0)
            #expect(subject.value.lowercased() == entry.0.lowercased())
            #expect(subject.value.hasPrefix("mailto:") || subject.value.hasPrefix("https://"))
        }
    }
}
