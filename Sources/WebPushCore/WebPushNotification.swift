/// What a browser shows: the JSON payload of a Web Push message, in the form a service worker reads or in the
/// Declarative Web Push form that Safari (iOS/iPadOS 18.4, macOS Safari 18.5) shows without a service worker.
///
/// Every field is optional and omitted from the JSON when nil. `data` is JSON text the caller supplies (an object,
/// already valid JSON: the job's custom data) and is copied as it is.
public struct WebPushNotification: Sendable, Hashable {
    /// The notification's title.
    public var title: String?
    /// The notification's body text.
    public var body: String?
    /// A tag: a newer notification with the same tag replaces the shown one.
    public var tag: String?
    /// The language of title and body (a BCP 47 tag).
    public var lang: String?
    /// The `https` URL opened when the notification is activated (required by the declarative form).
    public var navigate: String?
    /// An icon URL.
    public var icon: String?
    /// Whether the notification is shown without sound or vibration.
    public var silent: Bool?
    /// The application badge (the declarative form's `app_badge`).
    public var badge: Int?
    /// Custom data: the UTF-8 text of a JSON object, copied into the payload as it is (omitted when empty).
    public var data: [UInt8]?

    /// A notification; every field defaults to absent.
    public init(
        title: String? = nil, body: String? = nil, tag: String? = nil, lang: String? = nil, navigate: String? = nil,
        icon: String? = nil, silent: Bool? = nil, badge: Int? = nil, data: [UInt8]? = nil
    ) {
        self.title = title
        self.body = body
        self.tag = tag
        self.lang = lang
        self.navigate = navigate
        self.icon = icon
        self.silent = silent
        self.badge = badge
        self.data = data
    }

    /// Why this notification cannot take the declarative form, or nil when it can: Declarative Web Push needs a
    /// title, an `https` URL to navigate to, and a badge (if any) of zero or more.
    public func declarativeProblem() -> String? {
        guard let title, !title.isEmpty else { return "declarative Web Push needs a title" }
        guard let navigate, !navigate.isEmpty else {
            return "declarative Web Push needs navigate, the https URL opened on a click"
        }
        guard Self.isHTTPSURL(navigate) else { return "navigate must be an https URL with a host" }
        if let badge, badge < 0 { return "the app badge must be 0 or more, not \(badge)" }
        return nil
    }

    /// The payload as JSON text (UTF-8).
    ///
    /// - Service-worker form (`declarative: false`):
    ///   `{"title":…,"body":…,"tag":…,"lang":…,"icon":…,"navigate":…,"silent":…,"badge":n,"data":{…}}`.
    /// - Declarative form (`declarative: true`):
    ///   `{"web_push":8030,"notification":{"title":…,"navigate":…,"body":…,"tag":…,"lang":…,"icon":…,"silent":…,
    ///   "data":{…}},"app_badge":n,"mutable":true}`. `mutable` lets a service worker still rewrite it (the
    ///   declarative one is then the fallback); other browsers hand the same JSON to their service worker. When
    ///   ``declarativeProblem()`` is not nil, the service-worker form is written instead: check it first.
    public func json(declarative: Bool) -> [UInt8] {
        var writer = JSONWriter(capacity: estimatedSize)
        if declarative && declarativeProblem() == nil {
            writer.beginObject()
            writer.integer("web_push", 8030)
            writer.beginObject("notification")
            writer.string("title", title)
            writer.string("navigate", navigate)
            writer.string("body", body)
            writer.string("tag", tag)
            writer.string("lang", lang)
            writer.string("icon", icon)
            writer.boolean("silent", silent)
            writer.raw("data", data)
            writer.endObject()
            writer.integer("app_badge", badge)
            writer.boolean("mutable", true)
            writer.endObject()
        } else {
            writer.beginObject()
            writer.string("title", title)
            writer.string("body", body)
            writer.string("tag", tag)
            writer.string("lang", lang)
            writer.string("icon", icon)
            writer.string("navigate", navigate)
            writer.boolean("silent", silent)
            writer.integer("badge", badge)
            writer.raw("data", data)
            writer.endObject()
        }
        return writer.bytes
    }

    private var estimatedSize: Int {
        let texts = [title, body, tag, lang, navigate, icon].reduce(0) { $0 + ($1?.utf8.count ?? 0) }
        return 128 + texts + (data?.count ?? 0)
    }

    /// `https://` followed by a host (letters, digits, `-`, `.`, or a bracketed IPv6 literal), an optional port, and
    /// then nothing or a path, query or fragment; no spaces or control characters.
    static func isHTTPSURL(_ text: String) -> Bool {
        let prefix = "https://"
        guard text.utf8.count > prefix.utf8.count, text.lowercased().hasPrefix(prefix),
            text.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
        else { return false }
        let rest = text.dropFirst(prefix.count)
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var host = rest[rest.startIndex..<authorityEnd]
        guard !host.contains("@") else { return false }
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
            let port = host[host.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else { return false }
            host = host[host.startIndex..<colon]
        }
        if host.hasPrefix("[") {
            return host.count > 2 && host.hasSuffix("]")
                && host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" })
        }
        return !host.isEmpty && !host.hasPrefix(".") && !host.hasSuffix(".") && !host.contains("..")
            && host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." })
    }
}
