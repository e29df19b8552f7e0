import APNSCore

/// The rules a notification's `aps` dictionary and localizations follow beyond Apple's request rules
/// (`APNSRequest.validate`), stated in `schemas/job.schema.json` as `if`/`then`:
///
/// - `aps.alert` and `aps.sound` are a string or an object, `aps.badge` a whole number from 0 to 2147483647;
/// - an `alert` push (the default) shows something: `aps.alert`, `aps.sound` or `aps.badge` (or `badge_increment`);
///   one with nothing to show is refused with a pointer to `background`;
/// - a `background` push has `aps.content-available` 1 and nothing to show (no alert, sound, badge, badge increment
///   or localizations); without a priority it is sent at 5 (`NotificationTemplate`), as Apple requires;
/// - each key of `localizations` is a BCP 47 tag (`JobLimits.isTag`), each value a string or an object.
enum NotificationRules {
    /// The `aps` keys that make an alert push show something.
    static let visibleKeys = ["alert", "sound", "badge"]

    static func check(_ notification: JobNotification, pushType: PushType) throws(JobError) {
        let aps = notification.aps
        for key in ["alert", "sound"] {
            guard let value = aps[key] else { continue }
            switch value {
            case .string, .object: break
            default: throw JobError(.invalidNotification, "aps.\(key) must be a string or an object")
            }
        }
        if let badge = aps["badge"] {
            guard let number = badge.integerValue, (0...JobLimits.integerColumn.upperBound).contains(number) else {
                throw JobError(.invalidNotification, "aps.badge must be a whole number from 0 to 2147483647")
            }
        }
        let localizations = notification.localizations ?? [:]
        for (tag, alert) in localizations.sorted(by: { $0.key < $1.key }) {
            guard JobLimits.isTag(tag) else {
                throw JobError(
                    .invalidNotification,
                    "notification.localizations has a key that is not a BCP 47 tag (letters, then letters or digits, "
                        + "subtags of 1 to 8 separated by -, at most 35 characters)")
            }
            switch alert {
            case .string, .object: break
            default:
                throw JobError(.invalidNotification, "notification.localizations values must be a string or an object")
            }
        }
        let shows = visibleKeys.contains { aps[$0] != nil } || notification.badgeIncrement != nil
        switch pushType {
        case .alert:
            guard shows else {
                throw JobError(
                    .invalidNotification,
                    "an alert push needs aps.alert, aps.sound or aps.badge (or badge_increment): APNs shows nothing "
                        + "for this one; to wake the app silently, send push_type background with "
                        + "aps.content-available 1")
            }
        case .background:
            guard aps["content-available"]?.integerValue == 1 else {
                throw JobError(.invalidNotification, "a background push needs aps.content-available: 1")
            }
            guard !shows, localizations.isEmpty else {
                throw JobError(
                    .invalidNotification,
                    "a background push shows nothing: aps.alert, aps.sound, aps.badge, badge_increment and "
                        + "localizations belong to an alert push")
            }
        default:
            break
        }
    }
}
