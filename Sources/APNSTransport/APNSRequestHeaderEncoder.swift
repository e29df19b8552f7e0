import APNSCore
import CNGHTTP2

/// Builds the header list of one APNs request for `nghttp2_submit_request` without allocating per request.
///
/// Values are written into one reused scratch buffer and names are static strings that nghttp2 does not copy.
/// Per APNS.md, `:path`, `authorization` and `apns-id` (unique per request) are sent as literals never indexed;
/// the rest may be indexed by the HPACK encoder.
struct APNSRequestHeaderEncoder: ~Copyable {
    private struct Field {
        var name: StaticString
        var offset: Int
        var length: Int
        var flags: UInt8
    }

    private static let maximumFields = 12
    private var scratch: [UInt8] = []
    private var fields: [Field] = []
    private let nva: UnsafeMutablePointer<nghttp2_nv>
    private let authority: [UInt8]

    /// - Parameter authority: the `:authority` value (host, plus `:port` when it is not 443).
    init(authority: String) {
        self.authority = Array(authority.utf8)
        self.nva = .allocate(capacity: Self.maximumFields)
        self.scratch.reserveCapacity(1024)
        self.fields.reserveCapacity(Self.maximumFields)
    }

    deinit {
        nva.deallocate()
    }

    /// Submits `stream`'s request to `session` with `provider` for the body; returns the stream id or an nghttp2 error.
    mutating func submit(
        _ stream: APNSStream,
        to session: OpaquePointer,
        provider: UnsafePointer<nghttp2_data_provider>?
    ) -> Int32 {
        scratch.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        let request = stream.request

        add(":method", "POST")
        add(":scheme", "https")
        begin(":path", flags: UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue))
        scratch.append(contentsOf: "/3/device/".utf8)
        scratch.append(contentsOf: request.deviceToken.hex.utf8)
        end()
        begin(":authority")
        scratch.append(contentsOf: authority)
        end()
        if let bearerToken = stream.bearerToken {
            begin("authorization", flags: UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue))
            scratch.append(contentsOf: "bearer ".utf8)
            scratch.append(contentsOf: bearerToken.utf8)
            end()
        }
        add("apns-push-type", request.pushType.rawValue)
        add("apns-topic", request.topic)
        if let priority = request.priority {
            begin("apns-priority")
            appendDecimal(Int64(priority.rawValue))
            end()
        }
        if let expiration = request.expiration {
            begin("apns-expiration")
            appendDecimal(expiration)
            end()
        }
        if let collapseID = request.collapseID {
            add("apns-collapse-id", collapseID)
        }
        if let apnsID = request.apnsID {
            begin("apns-id", flags: UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue))
            apnsID.write(into: &scratch)
            end()
        }
        begin("content-length")
        appendDecimal(Int64(request.payload.count))
        end()

        let count = fields.count
        return scratch.withUnsafeBufferPointer { values -> Int32 in
            let base = UnsafeMutablePointer(mutating: values.baseAddress!)
            for index in 0..<count {
                let field = fields[index]
                nva[index] = nghttp2_nv(
                    name: UnsafeMutablePointer(mutating: field.name.utf8Start),
                    value: base + field.offset,
                    namelen: field.name.utf8CodeUnitCount,
                    valuelen: field.length,
                    flags: field.flags | UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue)
                )
            }
            // The stream is the stream's user data, unretained: the handler's `streams` holds it while it is open.
            return nghttp2_submit_request(session, nil, nva, count, provider, Unmanaged.passUnretained(stream).toOpaque())
        }
    }

    private mutating func begin(_ name: StaticString, flags: UInt8 = UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)) {
        fields.append(Field(name: name, offset: scratch.count, length: 0, flags: flags))
    }

    private mutating func end() {
        fields[fields.count - 1].length = scratch.count - fields[fields.count - 1].offset
    }

    private mutating func add(
        _ name: StaticString,
        _ value: String,
        flags: UInt8 = UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
    ) {
        begin(name, flags: flags)
        scratch.append(contentsOf: value.utf8)
        end()
    }

    /// Up to 15 digits the text of a number is a small string: no allocation.
    private mutating func appendDecimal(_ value: Int64) {
        scratch.append(contentsOf: String(value).utf8)
    }
}
