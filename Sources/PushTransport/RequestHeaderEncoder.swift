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
    private var authorization: (token: String, value: String)?
    /// The names indexed only the first time that this connection has sent.
    private var namesSent: FirstIndexed = []

    private struct FirstIndexed: OptionSet {
        var rawValue: UInt8
        static let expiration = FirstIndexed(rawValue: 1)
        static let collapseID = FirstIndexed(rawValue: 2)
        static let apnsID = FirstIndexed(rawValue: 4)
    }

    /// - Parameter authority: the `:authority` value (host, plus `:port` when it is not 443).
    init(authority: String, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.authority = authority
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
    }

    /// Appends the header block of `request` to `buffer`; `bearerToken` is the credential (APNs' provider token,
    /// FCM's access token), nil with APNs' certificates.
    mutating func writeBlock(for request: WireRequest, bearerToken: String?, into buffer: inout ByteBuffer) throws {
        try hpack.beginEncoding(allocator: ByteBufferAllocator())
        try hpack.append(header: ":method", value: "POST")
        try hpack.append(header: ":scheme", value: "https")
        switch request {
        case .apns(let request):
            try hpack.appendNonIndexed(header: ":path", value: "/3/device/" + request.deviceToken.hex)
            try appendCommon(bearerToken: bearerToken, scheme: "bearer ")
            try appendAPNSHeaders(of: request)
        case .fcm(let request):
            // The same path for every request of a project: indexed, a byte after the first.
            try hpack.append(header: ":path", value: request.path)
            try appendCommon(bearerToken: bearerToken, scheme: "Bearer ")
            try hpack.append(header: "content-type", value: "application/json")
        case .webpush(let request):
            // Each subscription's own path: never entered. The VAPID value (`vapid t=…, k=…`) is the whole
            // credential, the same for every request to the origin until it is renewed.
            try hpack.appendNonIndexed(header: ":path", value: request.path)
            try appendCommon(bearerToken: bearerToken, scheme: "")
            try hpack.append(header: "ttl", value: String(request.ttl))
            try hpack.append(header: "urgency", value: request.urgency)
            if let topic = request.topic { try hpack.appendNonIndexed(header: "topic", value: topic) }
            try hpack.append(header: "content-encoding", value: "aes128gcm")
            try hpack.append(header: "content-type", value: "application/octet-stream")
        }
        try hpack.appendNonIndexed(header: "content-length", value: String(request.payload.count))
        var block = try hpack.endEncoding()
        buffer.writeBuffer(&block)
    }

    /// `:authority` and `authorization`, both indexed.
    private mutating func appendCommon(bearerToken: String?, scheme: String) throws {
        try hpack.append(header: ":authority", value: authority)
        if let token = bearerToken {
            if authorization?.token != token {
                authorization = (token, scheme + token)
                namesSent = []
            }
            try hpack.append(header: "authorization", value: authorization!.value)
        }
    }

    private mutating func appendAPNSHeaders(of request: APNSRequest) throws {
        try hpack.append(header: "apns-push-type", value: request.pushType.rawValue)
        try hpack.append(header: "apns-topic", value: request.topic)
        if let priority = request.priority {
            try hpack.append(header: "apns-priority", value: String(priority.rawValue))
        }
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
        }
    }
}
