/// Which VAPID `sub` claims the simulator accepts: Apple's rules as the field reports them (WEBPUSH.md, "Apple's
/// rules"), the strictest of the push services, so that a sender that passes here passes everywhere.
///
/// - `mailto:` + `local@domain`: no spaces, angle brackets or other characters outside an address; the domain has
///   at least two labels of letters, digits and hyphens and is not `localhost` (`mailto:x@localhost` is refused,
///   as is a bare address without `mailto:`).
/// - `https://` + a host of the same kind (not `localhost`, not empty), optionally a port and a path; no spaces.
enum SubjectRules {
    /// Whether Apple's push service would accept `subject` as VAPID `sub`.
    static func isValid(_ subject: String) -> Bool {
        if subject.hasPrefix("mailto:") { return isAddress(subject.dropFirst("mailto:".count)) }
        if subject.hasPrefix("https://") { return isHTTPSURL(subject.dropFirst("https://".count)) }
        return false
    }

    private static func isAddress(_ address: Substring) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let localAllowed = Set("!#$%&'*+-/=?^_`{|}~.".utf8)
        guard parts[0].utf8.allSatisfy({ isLetterOrDigit($0) || localAllowed.contains($0) }),
            !parts[0].hasPrefix("."), !parts[0].hasSuffix("."), !parts[0].contains("..")
        else { return false }
        return isPublicHost(parts[1])
    }

    private static func isHTTPSURL(_ rest: Substring) -> Bool {
        guard !rest.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") })
        else { return false }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@") else { return false }
        let hostAndPort = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if hostAndPort.count == 2 {
            guard let port = Int(hostAndPort[1]), (1...65535).contains(port) else { return false }
        }
        return isPublicHost(hostAndPort[0])
    }

    /// A DNS name of two labels or more, none `localhost`.
    private static func isPublicHost(_ host: Substring) -> Bool {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, host.utf8.count <= 253, host.lowercased() != "localhost",
            labels.last?.lowercased() != "localhost"
        else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: false
        }
    }
}
