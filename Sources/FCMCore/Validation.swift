/// Character-level checks shared by the readers of external values.
enum Validation {
    /// ASCII letters, digits, `-` and `_`, 1…`maximumLength` of them: safe in a JSON string and a header unescaped.
    static func isIdentifier(_ value: String, maximumLength: Int) -> Bool {
        let bytes = value.utf8
        return !bytes.isEmpty && bytes.count <= maximumLength
            && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }

    /// A plausible email address: at most 254 printable ASCII characters without spaces, quotes or backslashes,
    /// with one `@` that has text on both sides.
    static func isEmail(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count <= 254, bytes.allSatisfy(isPlainPrintable),
            let at = bytes.firstIndex(of: UInt8(ascii: "@")), at > 0, at < bytes.count - 1,
            bytes[(at + 1)...].firstIndex(of: UInt8(ascii: "@")) == nil
        else { return false }
        return true
    }

    /// An `https://host…` URL of at most 2048 printable ASCII characters without spaces, quotes or backslashes.
    static func isHTTPSURL(_ value: String) -> Bool {
        let prefix = "https://"
        guard value.utf8.count <= 2048, value.hasPrefix(prefix), value.utf8.allSatisfy(isPlainPrintable) else {
            return false
        }
        let host = value.dropFirst(prefix.count).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return !host.isEmpty && !host.contains("@")
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// Printable ASCII other than space, `"` and `\`.
    static func isPlainPrintable(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    /// Printable ASCII, space included.
    static func isPrintable(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }

    /// Text from a remote party made safe to keep in a description: printable ASCII only (anything else becomes
    /// `?`), at most `maximumLength` characters, and any run that looks like a JWT, an access token or a device
    /// token (32 or more characters, all of them base64url, base64, `.`, `:` or `~`) replaced by `<redacted>`.
    static func safeText(_ value: String, maximumLength: Int = 256) -> String {
        var out: [UInt8] = []
        var run: [UInt8] = []
        func flush() {
            out.append(contentsOf: run.count >= 32 ? Array("<redacted>".utf8) : run)
            run.removeAll(keepingCapacity: true)
        }
        for byte in value.utf8.prefix(16 * 1024) {
            if isAlphanumeric(byte) || "-_.~+/=:".utf8.contains(byte) {
                run.append(byte)
            } else {
                flush()
                out.append(isPrintable(byte) ? byte : UInt8(ascii: "?"))
            }
        }
        flush()
        guard out.count > maximumLength else { return String(decoding: out, as: UTF8.self) }
        return String(decoding: out.prefix(maximumLength), as: UTF8.self) + "…"
    }
}
