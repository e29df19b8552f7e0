extension AMQPConfiguration {
    /// Parses an AMQP URI: `amqp://user:pass@host:port/vhost?heartbeat=30&connection_name=…`.
    ///
    /// User, password and vhost are percent-decoded. A missing or empty path, and `/%2f`, mean the vhost `/`.
    /// Without user information the user and password are `guest`. The port defaults to 5672.
    /// Supported query keys: `heartbeat` (seconds), `connection_timeout` (milliseconds), `connection_name`, and
    /// for `amqps://` (TLS, default port 5671) `cacertfile`, `certfile` and `keyfile` (PEM paths). Without
    /// `cacertfile` the broker's certificate is verified against ``AMQPTLSConfiguration/systemCABundle``;
    /// peer and host-name verification are always on.
    /// Error messages never repeat the password.
    public init(url: String) throws(AMQPError) {
        self.init()
        guard let schemeRange = url.firstRange(of: "://") else {
            throw AMQPError(.invalidURL, "missing scheme, expected amqp://")
        }
        switch url[..<schemeRange.lowerBound].lowercased() {
        case "amqp": break
        case "amqps":
            tls = AMQPTLSConfiguration()
            port = 5671
        case let other: throw AMQPError(.invalidURL, "unsupported scheme '\(other)', expected amqp:// or amqps://")
        }

        var rest = url[schemeRange.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var authority = rest
        var path: Substring?
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        }

        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.percentDecoded(userInfo[..<colon], part: "user")
                password = try Self.percentDecoded(userInfo[userInfo.index(after: colon)...], part: "password")
            } else {
                user = try Self.percentDecoded(userInfo, part: "user")
                password = ""
            }
        }
        try parseHostPort(hostPort)

        if let path, !path.isEmpty {
            guard !path.contains("/") else {
                throw AMQPError(.invalidURL, "the vhost must be one path segment; encode '/' as %2f")
            }
            vhost = try Self.percentDecoded(path, part: "vhost")
        }
        if let query { try parseQuery(query) }
    }

    private mutating func parseHostPort(_ hostPort: Substring) throws(AMQPError) {
        var portText: Substring?
        if hostPort.first == "[" {
            guard let close = hostPort.firstIndex(of: "]") else {
                throw AMQPError(.invalidURL, "unterminated IPv6 address")
            }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw AMQPError(.invalidURL, "unexpected text after IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = try Self.percentDecoded(hostPort[..<colon], part: "host")
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = try Self.percentDecoded(hostPort, part: "host")
        }
        if host.isEmpty { host = "localhost" }
        if let portText, !portText.isEmpty {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                // The text is not echoed: in a malformed URL such as `amqp://user:secret` it is the password.
                throw AMQPError(.invalidURL, "invalid port, expected a number from 1 to 65535")
            }
            port = value
        }
    }

    private mutating func parseQuery(_ query: Substring) throws(AMQPError) {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = parts[0]
            let value = parts.count > 1 ? try Self.percentDecoded(parts[1], part: String(key)) : ""
            switch key {
            case "heartbeat":
                guard let seconds = Int(value), seconds >= 0 else {
                    throw AMQPError(.invalidURL, "invalid heartbeat '\(value)'")
                }
                heartbeat = .seconds(seconds)
            case "connection_timeout":
                guard let milliseconds = Int(value), milliseconds > 0 else {
                    throw AMQPError(.invalidURL, "invalid connection_timeout '\(value)'")
                }
                connectTimeout = .milliseconds(milliseconds)
            case "connection_name":
                connectionName = value
            case "cacertfile", "certfile", "keyfile":
                guard tls != nil else { throw AMQPError(.invalidURL, "\(key) needs an amqps:// URL") }
                guard !value.isEmpty else { throw AMQPError(.invalidURL, "empty \(key)") }
                if key == "cacertfile" { tls?.caCertificatePath = value }
                if key == "certfile" { tls?.certificatePath = value }
                if key == "keyfile" { tls?.keyPath = value }
            default:
                continue  // other URI query keys (channel_max, auth_mechanism, …) are not used by this client
            }
        }
    }

    /// Decodes `%XX` escapes; the text is never echoed in errors because it may be a password.
    private static func percentDecoded(_ text: Substring, part: String) throws(AMQPError) -> String {
        guard text.contains("%") else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw AMQPError(.invalidURL, "invalid percent-encoding in the \(part)")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw AMQPError(.invalidURL, "the \(part) is not valid UTF-8 after percent-decoding")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
