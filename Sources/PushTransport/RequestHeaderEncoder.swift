import APNSCore
import NIOCore
import NIOHPACK

/// Compresses the headers of a connection's requests: nghttp2 frames each request, this encoder writes its header
/// block. One connection carries one provider's requests (APNs' or FCM's), so one table serves them.
///
/// libnghttp2 never enters `authorization` into the HPACK table, whatever the caller asks: its deflater treats the
/// field as a password. Each request would then carry the ~200-byte provider token again, Huffman-coded, for the
/// server to decode. So a request goes to nghttp2 with an empty header list (`startWaitingStreams`), and the
/// handler's flush replaces the block of the HEADERS frame nghttp2 serialises with the one
/// ``writeBlock(for:bearerToken:into:)`` encodes. That happens in the order the frames go on the wire, so this
/// encoder's dynamic table is the one the server decodes against. NIOHPACK does the encoding; its table follows the
/// server's SETTINGS_HEADER_TABLE_SIZE, up to 4,096 bytes.
///
/// What is indexed (decision 0013):
/// - **Indexed:** `:authority`, `authorization`, `apns-push-type`, `apns-topic` and `apns-priority`. They repeat
///   from request to request, so after the first each costs a byte. The provider token is indexed because issue 21
///   asks for it. It is a signature, not a guessable password: what never-indexing guards against does not apply to
///   it. It changes once an hour, so it takes one entry of the table at a time.
/// - **Never entered:** `:path`, unique per device (APNS.md), and `content-length`, whose name is in the static
///   table: payload sizes vary, and entering each one would push the provider token out of the table.
/// - **Indexed the first time, then sent without indexing:** `apns-expiration`, `apns-collapse-id` and `apns-id`. The
///   first request enters the name into the table; the values, which change, do not churn it. This is what Apple asks.
///   The names are entered again after a new provider token or table size, so that they stay among the newest
///   entries and are not the ones the table drops.
///
/// Literals are not Huffman-coded. NIOHPACK's Huffman coder was 11% of a worker's CPU in a broadcast; without it a
/// request is about 33 bytes longer (a 64-digit token and an apns-id), and broadcasts went 1.13 times as fast
/// (decision 0013).
struct RequestHeaderEncoder {
    /// The most header bytes (names and values) a request may have: with Huffman coding at its worst (4 bytes a
    /// byte) and the fields' prefixes, the block still fits the smallest frame a server may allow (16,384 bytes).
    static let maximumHeaderBytes = 3_840

    /// The table size used when the server allows more (and the HTTP/2 default).
    static let maximumTableSize = 4_096

    private var hpack: HPACKEncoder
    private let authority: String
    /// The provider token last sent and its header value, so that `bearer <token>` is built once per token.
    private var authorization: (token: String, scheme: String, value: String)?
    /// The names indexed only the first time that this connection has sent.
    private var namesSent: FirstIndexed = []
    /// Counts the changes of the table this encoder has made (entries added, a new size): bytes of indexed fields
    /// are valid only in the generation they were encoded in.
    private var generation = 0
    /// The bytes of the last request's constant indexed fields, the key they were encoded for and their generation.
    private var common: (key: CommonKey, generation: Int, bytes: [UInt8])?
    /// Whether the next block must open with a dynamic table size update (NIOHPACK writes it when it begins one).
    private var resizePending = false
    private let allocator: ByteBufferAllocator

    private struct FirstIndexed: OptionSet {
        var rawValue: UInt8
        static let expiration = FirstIndexed(rawValue: 1)
        static let collapseID = FirstIndexed(rawValue: 2)
        static let apnsID = FirstIndexed(rawValue: 4)
    }

    /// - Parameter authority: the `:authority` value (host, plus `:port` when it is not 443).
    init(authority: String, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.authority = authority
        self.allocator = allocator
        self.hpack = HPACKEncoder(
            allocator: allocator,
            useHuffmanEncoding: false,
            maxDynamicTableSize: Self.maximumTableSize
        )
    }

    /// The bytes of a request's header names and values, at most, to check against ``maximumHeaderBytes`` before it
    /// is submitted. For APNs, 256 covers the names (131 bytes), the fixed values (`POST`, `https`, `/3/device/`,
    /// `bearer `, apns-id: 62) and the three numbers (20 digits each at most); FCM's names and fixed values take less.
    func headerBytes(of request: WireRequest, bearerToken: String?) -> Int {
        switch request {
        case .apns(let request):
            256 + authority.utf8.count + request.deviceToken.hex.utf8.count + request.topic.utf8.count
                + request.pushType.rawValue.utf8.count + (bearerToken?.utf8.count ?? 0)
                + (request.collapseID?.utf8.count ?? 0)
        case .fcm(let request):
            256 + authority.utf8.count + request.path.utf8.count + (bearerToken?.utf8.count ?? 0)
        case .webpush(let request):
            256 + authority.utf8.count + request.path.utf8.count + (bearerToken?.utf8.count ?? 0)
                + (request.topic?.utf8.count ?? 0)
        }
    }

    /// The server's SETTINGS_HEADER_TABLE_SIZE changed: the next block announces the new size (and the smallest one
    /// since the last block, as RFC 7541 §4.2 asks).
    mutating func serverAllowsTable(of size: Int) {
        let size = min(size, Self.maximumTableSize)
        guard size != hpack.allowedDynamicTableSize else { return }
        // setDynamicTableSize throws only while a block is being encoded, and a block is encoded in one call.
        try? hpack.setDynamicTableSize(size)
        namesSent = []
        resizePending = true
        generation &+= 1
    }

    /// Appends the header block of `request` to `buffer`; `bearerToken` is the credential (APNs' provider token,
    /// FCM's access token), nil with APNs' certificates.
    ///
    /// A block is written in three parts: `:method` and `:scheme`; `:path` (never entered, but FCM's) and the fields
    /// that only reference the table once it holds them (`:authority`, `authorization` and the provider's constant
    /// fields); then the fields that change from request to request, `content-length` last (written here: its name
    /// is a static entry, its value never entered). The constant part is the same bytes for every
    /// request of a job as long as the table has not changed, so its bytes are kept (``common``) and copied, instead
    /// of each field being looked up again in NIOHPACK's table: that was a twelfth of a worker's CPU in a broadcast.
    /// Whatever enters the table (or resizes it) starts a new ``generation``; bytes kept from an older one are never
    /// reused.
    mutating func writeBlock(for request: WireRequest, bearerToken: String?, into buffer: inout ByteBuffer) throws {
        if resizePending {
            // The size update must open the block: NIOHPACK writes it at the start of the next encoding.
            resizePending = false
            generation &+= 1
            try hpack.beginEncoding(allocator: allocator)
            try hpack.append(header: ":method", value: "POST")
            try hpack.append(header: ":scheme", value: "https")
            var block = try hpack.endEncoding()
            buffer.writeBuffer(&block)
        } else {
            // `:method: POST` and `:scheme: https` are entries 3 and 7 of the static table (RFC 7541 Appendix A):
            // an indexed field each, whatever the dynamic table holds.
            buffer.writeBytes(Self.methodAndScheme)
        }
        switch request {
        case .apns(let request):
            Self.writeLiteral(Self.pathName, "/3/device/", request.deviceToken.hex, into: &buffer)
            try writeCommon(
                CommonKey(
                    provider: .apns, token: bearerToken, first: request.pushType.rawValue, second: request.topic,
                    number: request.priority.map { Int($0.rawValue) }),
                into: &buffer)
            if request.expiration != nil || request.collapseID != nil || request.apnsID != nil {
                try hpack.beginEncoding(allocator: allocator)
                try appendAPNSChangingHeaders(of: request)
                try endFields(into: &buffer)
            }
        case .fcm(let request):
            // The same path for every request of a project: indexed with the constant fields, a byte after the first.
            try writeCommon(
                CommonKey(provider: .fcm, token: bearerToken, first: request.path, second: nil, number: nil),
                into: &buffer)
        case .webpush(let request):
            // Each subscription's own path: never entered. The VAPID value (`vapid t=…, k=…`) is the whole
            // credential, the same for every request to the origin until it is renewed.
            Self.writeLiteral(Self.pathName, "", request.path, into: &buffer)
            try writeCommon(
                CommonKey(
                    provider: .webpush, token: bearerToken, first: request.urgency, second: nil, number: request.ttl),
                into: &buffer)
            if let topic = request.topic {
                try hpack.beginEncoding(allocator: allocator)
                try hpack.appendNonIndexed(header: "topic", value: topic)
                try endFields(into: &buffer)
            }
        }
        Self.writeLiteral(Self.contentLengthName, "", String(request.payload.count), into: &buffer)
    }

    /// `:path` and `content-length`: entries 4 and 28 of the static table (RFC 7541 Appendix A).
    private static let pathName = 4
    private static let contentLengthName = 28

    /// Appends a literal field without indexing whose name is static entry `name` and whose value is `prefix` and
    /// `value` (RFC 7541 §6.2.2, not Huffman-coded): what NIOHPACK's `appendNonIndexed` writes, without looking the
    /// name up in the table for every request. It enters nothing into the table.
    static func writeLiteral(_ name: Int, _ prefix: String, _ value: String, into buffer: inout ByteBuffer) {
        writeInteger(name, prefixBits: 4, flags: 0x00, into: &buffer)
        writeInteger(prefix.utf8.count + value.utf8.count, prefixBits: 7, flags: 0x00, into: &buffer)
        buffer.writeString(prefix)
        buffer.writeString(value)
    }

    /// An integer with an N-bit prefix (RFC 7541 §5.1), `flags` in the first byte's other bits.
    private static func writeInteger(_ value: Int, prefixBits: Int, flags: UInt8, into buffer: inout ByteBuffer) {
        let limit = (1 << prefixBits) - 1
        guard value >= limit else {
            buffer.writeInteger(flags | UInt8(value))
            return
        }
        buffer.writeInteger(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 128 {
            buffer.writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        buffer.writeInteger(UInt8(rest))
    }

    /// `:method: POST`, `:scheme: https`: static entries 3 and 7, indexed.
    private static let methodAndScheme: [UInt8] = [0x83, 0x87]

    /// What the indexed fields after the path depend on: the provider, the credential and the provider's constant
    /// fields (APNs: push type, topic and priority; FCM: the path, which comes first; Web Push: urgency and TTL).
    private struct CommonKey: Equatable {
        enum Provider { case apns, fcm, webpush }
        var provider: Provider
        var token: String?
        var first: String
        var second: String?
        var number: Int?
    }

    /// Writes the indexed fields of `key`: the bytes kept for it when the table is as it was then, or NIOHPACK's.
    private mutating func writeCommon(_ key: CommonKey, into buffer: inout ByteBuffer) throws {
        if let common, common.generation == generation, common.key == key {
            buffer.writeBytes(common.bytes)
            return
        }
        try hpack.beginEncoding(allocator: allocator)
        switch key.provider {
        case .apns:
            try appendCommon(bearerToken: key.token, scheme: "bearer ")
            try hpack.append(header: "apns-push-type", value: key.first)
            try hpack.append(header: "apns-topic", value: key.second ?? "")
            if let priority = key.number { try hpack.append(header: "apns-priority", value: String(priority)) }
        case .fcm:
            try hpack.append(header: ":path", value: key.first)
            try appendCommon(bearerToken: key.token, scheme: "Bearer ")
            try hpack.append(header: "content-type", value: "application/json")
        case .webpush:
            try appendCommon(bearerToken: key.token, scheme: "")
            try hpack.append(header: "ttl", value: String(key.number ?? 0))
            try hpack.append(header: "urgency", value: key.first)
            try hpack.append(header: "content-encoding", value: "aes128gcm")
            try hpack.append(header: "content-type", value: "application/octet-stream")
        }
        var block = try hpack.endEncoding()
        let bytes = Array(block.readableBytesView)
        buffer.writeBuffer(&block)
        if Self.onlyReferences(bytes) {
            common = (key, generation, bytes)
        } else {
            // Something entered the table: bytes kept before may now point at other entries.
            generation &+= 1
            common = nil
        }
    }

    /// Ends the block being encoded and appends it to `buffer`.
    private mutating func endFields(into buffer: inout ByteBuffer) throws {
        var block = try hpack.endEncoding()
        buffer.writeBuffer(&block)
    }

    /// Whether a block is indexed fields alone (RFC 7541 §6.1: a first byte with the high bit set, then the rest of
    /// the index's integer, §5.1): such a block entered nothing into the table.
    static func onlyReferences(_ bytes: [UInt8]) -> Bool {
        var index = 0
        while index < bytes.count {
            guard bytes[index] & 0x80 != 0 else { return false }
            if bytes[index] & 0x7F == 0x7F {
                // The index goes on in 7-bit groups; the last one has its high bit clear.
                index += 1
                while index < bytes.count, bytes[index] & 0x80 != 0 { index += 1 }
            }
            index += 1
        }
        return true
    }

    /// `:authority` and `authorization`, both indexed.
    private mutating func appendCommon(bearerToken: String?, scheme: String) throws {
        try hpack.append(header: ":authority", value: authority)
        if let token = bearerToken {
            if authorization?.token != token || authorization?.scheme != scheme {
                authorization = (token, scheme, scheme + token)
                namesSent = []
            }
            try hpack.append(header: "authorization", value: authorization!.value)
        }
    }

    /// `apns-expiration`, `apns-collapse-id` and `apns-id`: their names indexed the first time, their values never.
    private mutating func appendAPNSChangingHeaders(of request: APNSRequest) throws {
        if let expiration = request.expiration {
            try appendFirstIndexed("apns-expiration", String(expiration), .expiration)
        }
        if let collapseID = request.collapseID {
            try appendFirstIndexed("apns-collapse-id", collapseID, .collapseID)
        }
        if let apnsID = request.apnsID {
            try appendFirstIndexed("apns-id", apnsID.description, .apnsID)
        }
    }

    private mutating func appendFirstIndexed(_ name: String, _ value: String, _ which: FirstIndexed) throws {
        if namesSent.contains(which) {
            try hpack.appendNonIndexed(header: name, value: value)
        } else {
            try hpack.append(header: name, value: value)
            namesSent.insert(which)
            // The name (and this value) entered the table.
            generation &+= 1
        }
    }
}
