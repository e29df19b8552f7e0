/// Reading back what the store wrote: a subscription validated when it was registered (the curve check included)
/// and held since to the columns' rules (schemas/034). A broadcast reads a page of thousands of them, so these skip
/// the checks: no P-256 curve check (tens of µs a key), no Character-by-Character walk of the endpoint.
extension WebPushKeys {
    /// The keys of `stored` (`<p256dh>.<auth>`, unpadded base64url), decoded without the curve check. Text that is
    /// not that form (which the store's CHECK does not let in) gives empty keys, which no encryption accepts.
    public init(trustedStored stored: String) {
        let bytes = Array(stored.utf8)
        let dot = bytes.firstIndex(of: UInt8(ascii: ".")) ?? bytes.endIndex
        let p256dh = TrustedBase64URL.decode(bytes[bytes.startIndex..<dot])
        let auth = dot < bytes.endIndex ? TrustedBase64URL.decode(bytes[(dot + 1)...]) : nil
        if let p256dh, let auth {
            self.p256dh = p256dh
            self.auth = auth
        } else {
            self.p256dh = []
            self.auth = []
        }
    }
}

extension WebPushEndpoint {
    /// The endpoint `url`, validated before (read back from the store): its origin, host, port and path split out
    /// over its bytes, without the checks of `init(_:)`. The host is lowercased as there; a port is read as digits.
    public init(trusted url: String) {
        let bytes = url.utf8
        let scheme = 8  // "https://": the store's CHECK holds every web token to it
        guard bytes.count > scheme else {
            self.url = url
            self.host = ""
            self.port = 443
            self.origin = "https://"
            self.path = "/"
            return
        }
        let start = bytes.index(bytes.startIndex, offsetBy: scheme)
        let authorityEnd =
            bytes[start...].firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) ?? bytes.endIndex
        var hostEnd = authorityEnd
        var port = 443
        let authority = bytes[start..<authorityEnd]
        if authority.last != UInt8(ascii: "]"), let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
            var number = 0
            for byte in bytes[bytes.index(after: colon)..<authorityEnd]
            where byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                number = min(number * 10 + Int(byte - UInt8(ascii: "0")), 65_535)
            }
            port = number
            hostEnd = colon
        }
        let host = Substring(url.utf8[start..<hostEnd])
        let lower = host.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
        self.url = url
        self.host = lower ? host.lowercased() : String(host)
        self.port = port
        self.origin = "https://" + self.host + (port == 443 ? "" : ":\(port)")
        let pathPart = Substring(url.utf8[authorityEnd...])
        self.path = pathPart.isEmpty ? "/" : (pathPart.hasPrefix("?") ? "/" + pathPart : String(pathPart))
    }
}

extension WebPushSubscription {
    /// A subscription read back from the store: its endpoint (`token`), its keys (`WebPushKeys.stored`) and its
    /// `expirationTime` in milliseconds, none checked again.
    public init(trustedEndpoint endpoint: String, storedKeys: String, expirationTime: Int64?) {
        self.init(
            endpoint: WebPushEndpoint(trusted: endpoint), keys: WebPushKeys(trustedStored: storedKeys),
            expirationTime: expirationTime)
    }
}

/// Unpadded base64url straight from bytes to bytes (the store writes it without padding); nil for any other byte or
/// an impossible length.
enum TrustedBase64URL {
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}
