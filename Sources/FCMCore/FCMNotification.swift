/// `message.notification`: what every platform shows.
public struct FCMNotification: Sendable, Hashable {
    /// The title.
    public var title: String?
    /// The body text.
    public var body: String?
    /// An http(s) URL of an image the device downloads.
    public var image: String?

    /// Creates the notification; unset fields are left out.
    public init(title: String? = nil, body: String? = nil, image: String? = nil) {
        self.title = title
        self.body = body
        self.image = image
    }

    var json: JSON {
        var members: [String: JSON] = [:]
        members["title"] = title.map(JSON.string)
        members["body"] = body.map(JSON.string)
        members["image"] = image.map(JSON.string)
        return .object(members)
    }
}
