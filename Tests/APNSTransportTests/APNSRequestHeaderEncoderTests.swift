import APNSCore
import NIOCore
import NIOHPACK
import Testing

@testable import APNSTransport

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

    /// Encodes one request's block and decodes it; returns the block's size and the decoded fields.
    private static func roundTrip(
        _ request: APNSRequest,
        jwt: String? = jwt,
        _ encoder: inout APNSRequestHeaderEncoder,
        _ decoder: inout HPACKDecoder
    ) throws -> (bytes: Int, fields: [(name: String, value: String, indexable: HPACKIndexing)]) {
        var block = ByteBuffer()
        try encoder.writeBlock(for: request, bearerToken: jwt, into: &block)
        let bytes = block.readableBytes
        let headers = try decoder.decodeHeaders(from: &block)
        return (bytes, headers.map { ($0.name, $0.value, $0.indexable) })
    }

    @Test func afterTheFirstRequestTheProviderTokenAndTheConstantFieldsCostAByteEach() throws {
        var encoder = APNSRequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let tokens = ["a1b2c3d4" + String(repeating: "0", count: 56), "a1b2c3d5" + String(repeating: "0", count: 56)]

        let first = try Self.roundTrip(Self.request(token: tokens[0]), &encoder, &decoder)
        #expect(first.fields.map { "\($0.name): \($0.value)" } == Self.expectedFields(token: tokens[0]))
        #expect(first.bytes > Self.jwt.utf8.count / 2, "the first block carries the provider token")

        let second = try Self.roundTrip(Self.request(token: tokens[1], expiration: 1_700_000_060), &encoder, &decoder)
        #expect(
            second.fields.map { "\($0.name): \($0.value)" }
                == Self.expectedFields(token: tokens[1], expiration: 1_700_000_060))
        // The same two requests on a connection with certificates (no provider token): the token costs one byte.
        var certificateEncoder = APNSRequestHeaderEncoder(authority: "api.push.apple.com")
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
        var encoder = APNSRequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        for index in 0..<50 {
            let token = String(format: "%08x", index)
            let expiration = 1_700_000_000 + Int64(index)
            let decoded = try Self.roundTrip(Self.request(token: token, expiration: expiration), &encoder, &decoder)
            #expect(
                decoded.fields.map { "\($0.name): \($0.value)" }
                    == Self.expectedFields(token: token, expiration: expiration))
            let entered = decoded.fields.filter { $0.indexable == .indexable }.map(\.name)
            #expect(!entered.contains(":path") && !entered.contains("apns-expiration") && !entered.contains("apns-id"))
            #expect(decoded.bytes < 80, "block \(index) is \(decoded.bytes) bytes: a value was sent again")
        }
    }

    @Test func aNewProviderTokenIsSentInFullOnceAndThenIndexed() throws {
        var encoder = APNSRequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        let newJWT = String(Self.jwt.reversed())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        let changed = try Self.roundTrip(Self.request(token: "ab02"), jwt: newJWT, &encoder, &decoder)
        #expect(changed.fields.map { "\($0.name): \($0.value)" } == Self.expectedFields(token: "ab02", jwt: newJWT))
        #expect(changed.bytes > newJWT.utf8.count / 2)
        let again = try Self.roundTrip(Self.request(token: "ab03"), jwt: newJWT, &encoder, &decoder)
        #expect(again.fields.map { "\($0.name): \($0.value)" } == Self.expectedFields(token: "ab03", jwt: newJWT))
        #expect(again.bytes < newJWT.utf8.count / 2)
    }

    @Test(arguments: [0, 256])
    func aServerTableSmallerThanTheDefaultIsAnnouncedAndKept(size: Int) throws {
        var encoder = APNSRequestHeaderEncoder(authority: "api.push.apple.com")
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        _ = try Self.roundTrip(Self.request(token: "ab01"), &encoder, &decoder)
        // The server's SETTINGS arrive; it now decodes with the smaller table.
        encoder.serverAllowsTable(of: size)
        decoder.maxDynamicTableLength = size
        for index in 0..<3 {
            let token = String(format: "%04x", index)
            let decoded = try Self.roundTrip(Self.request(token: token), &encoder, &decoder)
            #expect(decoded.fields.map { "\($0.name): \($0.value)" } == Self.expectedFields(token: token))
            // The provider token no longer fits the table, so it is sent each time.
            #expect(decoded.bytes > Self.jwt.utf8.count / 2)
            #expect(decoder.allowedDynamicTableLength == size)
        }
        // The server allows the default again: the token is entered once and indexed from then on.
        encoder.serverAllowsTable(of: 65_536)
        decoder.maxDynamicTableLength = 65_536
        _ = try Self.roundTrip(Self.request(token: "ab02"), &encoder, &decoder)
        #expect(decoder.allowedDynamicTableLength == APNSRequestHeaderEncoder.maximumTableSize)
        let indexed = try Self.roundTrip(Self.request(token: "ab03"), &encoder, &decoder)
        #expect(indexed.bytes < Self.jwt.utf8.count / 2)
    }
}
