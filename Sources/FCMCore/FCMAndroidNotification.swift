/// `message.android.notification`: how Android shows the notification.
public struct FCMAndroidNotification: Sendable, Hashable {
    /// The notification channel; the app must have created it, or the manifest's default channel is used.
    public var channelID: String?
    /// The title, overriding `message.notification.title` on Android.
    public var title: String?
    /// The body, overriding `message.notification.body` on Android.
    public var body: String?
    /// The app's string resource for the title.
    public var titleLocKey: String?
    /// The format arguments of `titleLocKey`.
    public var titleLocArgs: [String]?
    /// The app's string resource for the body.
    public var bodyLocKey: String?
    /// The format arguments of `bodyLocKey`.
    public var bodyLocArgs: [String]?
    /// The drawable resource of the small icon.
    public var icon: String?
    /// `#rrggbb`.
    public var color: String?
    /// The sound resource, or `default`.
    public var sound: String?
    /// Notifications with one tag replace each other in the drawer.
    public var tag: String?
    /// The activity intent filter to open on a tap.
    public var clickAction: String?
    /// An http(s) URL of an image.
    public var image: String?
    /// The badge count shown by launchers that support it (0 or more).
    public var notificationCount: Int?

    /// Creates the notification options; unset fields are left out of the message.
    public init(
        channelID: String? = nil, title: String? = nil, body: String? = nil, titleLocKey: String? = nil,
        titleLocArgs: [String]? = nil, bodyLocKey: String? = nil, bodyLocArgs: [String]? = nil, icon: String? = nil,
        color: String? = nil, sound: String? = nil, tag: String? = nil, clickAction: String? = nil,
        image: String? = nil, notificationCount: Int? = nil
    ) {
        self.channelID = channelID
        self.title = title
        self.body = body
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.bodyLocKey = bodyLocKey
        self.bodyLocArgs = bodyLocArgs
        self.icon = icon
        self.color = color
        self.sound = sound
        self.tag = tag
        self.clickAction = clickAction
        self.image = image
        self.notificationCount = notificationCount
    }

    var json: JSON {
        var members: [String: JSON] = [:]
        let strings: [(String, String?)] = [
            ("channel_id", channelID), ("title", title), ("body", body), ("title_loc_key", titleLocKey),
            ("body_loc_key", bodyLocKey), ("icon", icon), ("color", color), ("sound", sound), ("tag", tag),
            ("click_action", clickAction), ("image", image),
        ]
        for (key, value) in strings { members[key] = value.map(JSON.string) }
        members["title_loc_args"] = titleLocArgs.map { .array($0.map(JSON.string)) }
        members["body_loc_args"] = bodyLocArgs.map { .array($0.map(JSON.string)) }
        members["notification_count"] = notificationCount.map { .number(String($0)) }
        return .object(members)
    }
}
