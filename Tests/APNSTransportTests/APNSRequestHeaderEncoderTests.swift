import APNSCore
import NIOCore
import NIOHPACK
import Testing

@testable import PushTransport

/// The client's HPACK encoding of request headers, decoded as a server would: with NIOHPACK's decoder, one table per
/// connection, blocks in order.
@Suite struct APNSRequestHeaderEncoderTests {
    private static let jwt =
        "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ."
        + "eyJpc3MiOiJERUY0NTZHSElKIiwiaWF0IjoxNzAwMDAwMDAwfQ."
        + String(repeating: "MEUCIQDx7mP1fTk2b3v9sW0c4nZq8yK5rA6jH1eG2dC3bB4aAQ", count: 2)

    private static func request(token: String, expiration: Int64 = 1_700_000_000) -> APNSRequest {
        APNSRequest(
            deviceToken: DeviceToken(trustedHex: token),
            topic: "com.example.app",
            pushType: .alert,
            priority: .immediate,
            expiration: expiration,
            collapseID: "scores",
            apnsID: APNSID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
            payload: Array(#"{"aps":{"alert":"hello"}}"#.utf8)
        )
    }

    private static func expectedFields(token: String, expiration: Int64 = 1_700_000_000, jwt: String = jwt) -> [String]
    {
        [
            ":method: POST", ":scheme: https", ":path: /3/device/\(token)", ":authority: api.push.apple.com",
            "authorization: bearer \(jwt)", "apns-push-type: alert", "apns-topic: com.example.app",
            "apns-priority: 10", "apns-expiration: \(expiration)", "apns-collapse-id: scores",
            "apns-id: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "content-length: 25",
        ]
    }

    /// The size of a block once the connection's table holds the constant fields: 57 bytes of references and
    /// prefixes plus the literal values. 2 for :method and :scheme; 2 for :path's prefix and length; 1 each for
    /// :authority, authorization, push type, topic, priority; 3 each (a 2-byte name reference and a length) for
    /// apns-expiration, apns-collapse-id, apns-id and content-length; 36 for the apns-id.
    private static func indexedBlockSize(path: String, expiration: Int64, collapseID: String, payload: Int) -> Int {
        57 + path.utf8.count + String(expiration).utf8.count + collapseID.utf8.count + String(payload).utf8.count
    }

    private struct Decoded {
        var block: [UInt8]
        var fields: [(name: String, value: String, indexable: HPACKIndexing)]
        var bytes: Int { block.count }
        var lines: [String] { fields.map { "\($0.name): \($0.value)" } }
    }

    /// Encodes one request's block and decodes it.
    private static func roundTrip(
        _ request: APNSRequest,
        jwt: String? = jwt,
        _ encoder: inout RequestHeaderEncoder,
        _ decoder: inout HPACKDecoder
    ) throws -> Decoded {
        var block = ByteBuffer()
        try encoder.writeBlock(for: .apns(request), bearerToken: jwt, into: &block)
        let bytes = Array(block.readableBytesView)
        let headers = try decoder.decodeHeaders(from: &block)
        return Decoded(block: bytes, fields: headers.map { ($0.name, $0.value, $0.indexable) })
    }

    @Test func afterTheFirstRequestTheProviderTokenAndTheConstantFieldsCostAByteEach() throws {
        var encoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let tokens = ["a1b2c3d4" + String(repeating: "0", count: 56), "a1b2c3d5" + String(repeating: "0", count: 56)]

        let first = try Self.roundTrip(Self.request(token: tokens[0]), &encoder, &decoder)
        #expect(first.lines == Self.expectedFields(token: tokens[0]))
        #expect(first.bytes > Self.jwt.utf8.count / 2, "the first block carries the provider token")

        let second = try Self.roundTrip(Self.request(token: tokens[1], expiration: 1_700_000_060), &encoder, &decoder)
        #expect(
            second.lines
                == Self.expectedFields(token: tokens[1], expiration: 1_700_000_060))
        // The same two requests on a connection with certificates (no provider token): the token costs one byte.
        var certificateEncoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var certificateDecoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: tokens[0]), jwt: nil, &certificateEncoder, &certificateDecoder)
        let withoutToken = try Self.roundTrip(
            Self.request(token: tokens[1], expiration: 1_700_000_060), jwt: nil, &certificateEncoder,
            &certificateDecoder
        )
        #expect(second.bytes == withoutToken.bytes + 1, "the second block is \(second.bytes) bytes")

        let indexing = Dictionary(
            second.fields.map { ($0.name, $0.indexable) }, uniquingKeysWith: { first, _ in first })
        #expect(indexing[":path"] == .nonIndexable)
        #expect(indexing["apns-expiration"] == .nonIndexable)
        #expect(indexing["apns-id"] == .nonIndexable)
        #expect(indexing["authorization"] == .indexable)
    }

    @Test func pathsAndChangingValuesNeverEnterTheTable() throws {
        var encoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        for index in 0..<50 {
            let token = String(format: "%08x", index)
            let expiration = 1_700_000_000 + Int64(index)
            let decoded = try Self.roundTrip(Self.request(token: token, expiration: expiration), &encoder, &decoder)
            #expect(
                decoded.lines
                    == Self.expectedFields(token: token, expiration: expiration))
            let entered = decoded.fields.filter { $0.indexable == .indexable }.map(\.name)
            let changing = [":path", "apns-expiration", "apns-collapse-id", "apns-id", "content-length"]
            #expect(Set(entered).isDisjoint(with: changing), "entered: \(entered)")
            let size = Self.indexedBlockSize(
                path: "/3/device/" + token, expiration: expiration, collapseID: "scores", payload: 25)
            #expect(decoded.bytes == size, "block \(index): a value other than the literals was sent again")
        }
    }

    @Test func aNewProviderTokenIsSentInFullOnceAndThenIndexed() throws {
        var encoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let newJWT = String(Self.jwt.reversed())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        let changed = try Self.roundTrip(Self.request(token: "ab02"), jwt: newJWT, &encoder, &decoder)
        #expect(changed.lines == Self.expectedFields(token: "ab02", jwt: newJWT))
        #expect(changed.bytes > newJWT.utf8.count / 2)
        let again = try Self.roundTrip(Self.request(token: "ab03"), jwt: newJWT, &encoder, &decoder)
        #expect(again.lines == Self.expectedFields(token: "ab03", jwt: newJWT))
        #expect(again.bytes < newJWT.utf8.count / 2)
    }

    @Test(arguments: [0, 256])
    func aServerTableSmallerThanTheDefaultIsAnnouncedAndKept(size: Int) throws {
        var encoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        // The server's SETTINGS arrive; it now decodes with the smaller table.
        encoder.serverAllowsTable(of: size)
        decoder.maxDynamicTableLength = size
        // The next block opens with a dynamic table size update (001xxxxx) to the new size.
        let announced = try Self.roundTrip(Self.request(token: "ab02"), &encoder, &decoder)
        #expect(announced.block.first.map { $0 & 0xE0 } == 0x20)
        #expect(announced.block.first.map { Int($0 & 0x1F) } == min(size, 31))
        for index in 0..<3 {
            let token = String(format: "%04x", index)
            let decoded = try Self.roundTrip(Self.request(token: token), &encoder, &decoder)
            #expect(decoded.lines == Self.expectedFields(token: token))
            // The provider token no longer fits the table, so it is sent each time.
            #expect(decoded.bytes > Self.jwt.utf8.count / 2)
            #expect(decoder.allowedDynamicTableLength == size)
        }
        // The server allows the default again: the token is entered once and indexed from then on.
        encoder.serverAllowsTable(of: 65_536)
        decoder.maxDynamicTableLength = 65_536
        _ = try Self.roundTrip(Self.request(token: "ab02"), &encoder, &decoder)
        #expect(decoder.allowedDynamicTableLength == RequestHeaderEncoder.maximumTableSize)
        let indexed = try Self.roundTrip(Self.request(token: "ab03"), &encoder, &decoder)
        #expect(indexed.bytes < Self.jwt.utf8.count / 2)
    }

    @Test func twoSizesBeforeTheNextBlockAnnounceTheSmallestThenTheLast() throws {
        var encoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        // One SETTINGS frame with HEADER_TABLE_SIZE 0 then 4,096: the server empties its table.
        encoder.serverAllowsTable(of: 0)
        encoder.serverAllowsTable(of: 4_096)
        let decoded = try Self.roundTrip(Self.request(token: "ab02"), &encoder, &decoder)
        // 0x20 is "size 0"; 0x3F 0xE1 0x1F is "size 4,096" (31 + 4,065 in 7-bit groups).
        #expect(Array(decoded.block.prefix(4)) == [0x20, 0x3F, 0xE1, 0x1F])
        #expect(decoded.lines == Self.expectedFields(token: "ab02"))
        #expect(decoded.bytes > Self.jwt.utf8.count / 2, "the emptied table no longer holds the provider token")
    }

    @Test func payloadsOfEverySizeLeaveTheProviderTokenInTheTable() throws {
        var encoder = RequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        for size in 100..<400 {
            var request = Self.request(token: "ab02")
            request.payload = Array(repeating: UInt8(ascii: " "), count: size)
            let decoded = try Self.roundTrip(request, &encoder, &decoder)
            #expect(decoded.fields.last.map { "\($0.name): \($0.value)" } == "content-length: \(size)")
            let expected = Self.indexedBlockSize(
                path: "/3/device/ab02", expiration: 1_700_000_000, collapseID: "scores", payload: size)
            #expect(decoded.bytes == expected, "payload of \(size) bytes: the provider token was sent again")
        }
    }

    /// Requests of the three providers, of two jobs each (push types, topics, priorities, urgencies and TTLs that
    /// differ), a new credential half way and a smaller table near the end, interleaved in an irregular fixed order
    /// on one connection: every block decodes, with the server's one table, to exactly the request's fields. The
    /// kept bytes of the constant fields are reused only while the table is as it was when they were encoded.
    @Test func keptConstantFieldsDecodeRightWhateverCameBetween() throws {
        var encoder = RequestHeaderEncoder(authority: "push.example.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        var jwt = Self.jwt
        for index in 0..<600 {
            if index == 300 { jwt = String(Self.jwt.reversed()) }
            // The server allows a smaller table: the encoder must say so at the start of its next block (the decoder
            // keeps its own maximum, and follows the update the block announces).
            if index == 450 { encoder.serverAllowsTable(of: 512) }
            // Runs of one kind (a job's requests) broken up irregularly.
            // The first ten are of a job without expiration, collapse id or apns-id, with the constant fields of
            // the job after them, whose first request enters those names into the table.
            let pick = index < 10 ? 6 : index < 15 ? 0 : (index / 7 + index * index / 13) % 6
            let token = String(format: "%064x", index)
            let request: WireRequest
            let expected: [String]
            switch pick {
            case 6:
                var apns = Self.request(token: token)
                (apns.expiration, apns.collapseID, apns.apnsID) = (nil, nil, nil)
                request = .apns(apns)
                expected = [
                    ":method: POST", ":scheme: https", ":path: /3/device/\(token)", ":authority: push.example.com",
                    "authorization: bearer \(jwt)", "apns-push-type: alert", "apns-topic: com.example.app",
                    "apns-priority: 10", "content-length: 25",
                ]
            case 0, 1:
                var apns = Self.request(token: token)
                if pick == 1 {
                    apns.pushType = .background
                    apns.topic = "com.example.other"
                    apns.priority = .conservePower
                }
                request = .apns(apns)
                expected = [
                    ":method: POST", ":scheme: https", ":path: /3/device/\(token)", ":authority: push.example.com",
                    "authorization: bearer \(jwt)", "apns-push-type: \(apns.pushType.rawValue)",
                    "apns-topic: \(apns.topic)", "apns-priority: \(apns.priority!.rawValue)",
                    "apns-expiration: 1700000000", "apns-collapse-id: scores",
                    "apns-id: 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "content-length: 25",
                ]
            case 2, 3:
                let path = "/v1/projects/\(pick == 2 ? "one" : "two")/messages:send"
                request = .fcm(FCMWireRequest(path: path, body: Array(repeating: 0x20, count: 100 + index)))
                expected = [
                    ":method: POST", ":scheme: https", ":path: \(path)", ":authority: push.example.com",
                    "authorization: Bearer \(jwt)", "content-type: application/json",
                    "content-length: \(100 + index)",
                ]
            default:
                let urgency = pick == 4 ? "high" : "low"
                let ttl = pick == 4 ? 60 : 2_419_200
                let topic: String? = pick == 4 ? nil : "scores-\(index % 3)"
                // A path over 126 bytes takes a length of several bytes (RFC 7541 §5.1).
                let path = "/push/\(token)" + (pick == 5 ? String(repeating: "x", count: 100 + index) : "")
                request = .webpush(
                    WebPushWireRequest(
                        path: path, ttl: ttl, urgency: urgency, topic: topic,
                        body: Array(repeating: 0, count: 300)))
                expected =
                    [
                        ":method: POST", ":scheme: https", ":path: \(path)", ":authority: push.example.com",
                        "authorization: \(jwt)", "ttl: \(ttl)", "urgency: \(urgency)",
                    ] + (topic.map { ["topic: \($0)"] } ?? []) + [
                        "content-encoding: aes128gcm", "content-type: application/octet-stream",
                        "content-length: 300",
                    ]
            }
            var block = ByteBuffer()
            try encoder.writeBlock(for: request, bearerToken: jwt, into: &block)
            if index == 450 {
                // 001xxxxx with 512 = 31 + 481 in 7-bit groups: 0x3F 0xE1 0x03.
                #expect(Array(block.readableBytesView.prefix(3)) == [0x3F, 0xE1, 0x03])
            }
            let headers = try decoder.decodeHeaders(from: &block)
            if index == 450 { #expect(decoder.allowedDynamicTableLength == 512) }
            let lines = headers.map { "\($0.name): \($0.value)" }
            // Web Push's topic is written after the constant fields: compare as sets past the pseudo-headers.
            #expect(Array(lines.prefix(4)) == Array(expected.prefix(4)), "request \(index)")
            #expect(lines.sorted() == expected.sorted(), "request \(index)")
        }
    }

    @Test func onlyIndexedFieldsAreRecognised() {
        #expect(RequestHeaderEncoder.onlyReferences([]))
        #expect(RequestHeaderEncoder.onlyReferences([0x83, 0x87, 0xBE]))
        // Index 127 + 200: 0xFF, then 200 in 7-bit groups (0xC8 0x01).
        #expect(RequestHeaderEncoder.onlyReferences([0x82, 0xFF, 0xC8, 0x01, 0x84]))
        // A literal with incremental indexing (01xxxxxx), one without (0000xxxx), a size update (001xxxxx).
        #expect(!RequestHeaderEncoder.onlyReferences([0x82, 0x41, 0x01, 0x61]))
        #expect(!RequestHeaderEncoder.onlyReferences([0x04, 0x01, 0x61]))
        #expect(!RequestHeaderEncoder.onlyReferences([0x3F, 0xE1, 0x1F, 0x82]))
    }
}
