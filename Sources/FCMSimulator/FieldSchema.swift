/// The shape of one field of FCM's request and Message resource, as proto3 JSON reads it: enough to answer unknown
/// fields and wrong types as Google's front end does, before any FCM rule runs.
indirect enum FieldSchema: Sendable {
    case string
    case bool
    /// An integer, as a JSON number or a decimal string (proto3 JSON accepts both).
    case integer
    case stringList
    /// A `map<string, string>`: every value a string.
    case stringMap
    /// A `google.protobuf.Struct`: any JSON object.
    case anyObject
    /// A nested message with known fields.
    case message(ObjectSchema)

    /// The type as Google's errors name it: `TYPE_STRING`, `type.googleapis.com/google.firebase.fcm.v1.Notification`.
    var typeName: String {
        switch self {
        case .string, .stringList: "TYPE_STRING"
        case .bool: "TYPE_BOOL"
        case .integer: "TYPE_INT32"
        case .stringMap: "type.googleapis.com/google.protobuf.Map"
        case .anyObject: "type.googleapis.com/google.protobuf.Struct"
        case .message(let schema): "type.googleapis.com/\(schema.typeName)"
        }
    }
}

/// A message type: its proto name and its fields by snake_case name.
struct ObjectSchema: Sendable {
    var typeName: String
    var fields: [String: FieldSchema]
}

extension ObjectSchema {
    /// `SendMessageRequest`.
    static let request = ObjectSchema(
        typeName: "google.firebase.fcm.v1.SendMessageRequest",
        fields: ["message": .message(message), "validate_only": .bool])

    /// `Message`.
    static let message = ObjectSchema(
        typeName: "google.firebase.fcm.v1.Message",
        fields: [
            "name": .string, "data": .stringMap, "notification": .message(notification), "android": .message(android),
            "webpush": .message(webpush), "apns": .message(apns), "fcm_options": .message(fcmOptions),
            "token": .string, "topic": .string, "condition": .string, "fid": .string,
        ])

    static let notification = ObjectSchema(
        typeName: "google.firebase.fcm.v1.Notification", fields: ["title": .string, "body": .string, "image": .string])

    static let fcmOptions = ObjectSchema(
        typeName: "google.firebase.fcm.v1.FcmOptions", fields: ["analytics_label": .string])

    static let android = ObjectSchema(
        typeName: "google.firebase.fcm.v1.AndroidConfig",
        fields: [
            "collapse_key": .string, "priority": .string, "ttl": .string, "restricted_package_name": .string,
            "data": .stringMap, "notification": .message(androidNotification), "fcm_options": .message(fcmOptions),
            "direct_boot_ok": .bool, "bandwidth_constrained_ok": .bool, "restricted_satellite_ok": .bool,
        ])

    static let androidNotification = ObjectSchema(
        typeName: "google.firebase.fcm.v1.AndroidNotification",
        fields: [
            "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string, "tag": .string,
            "click_action": .string, "body_loc_key": .string, "body_loc_args": .stringList, "title_loc_key": .string,
            "title_loc_args": .stringList, "channel_id": .string, "ticker": .string, "sticky": .bool,
            "event_time": .string, "local_only": .bool, "notification_priority": .string, "default_sound": .bool,
            "default_vibrate_timings": .bool, "default_light_settings": .bool, "vibrate_timings": .stringList,
            "visibility": .string, "notification_count": .integer, "light_settings": .message(lightSettings),
            "image": .string, "proxy": .string,
        ])

    static let lightSettings = ObjectSchema(
        typeName: "google.firebase.fcm.v1.LightSettings",
        fields: ["color": .anyObject, "light_on_duration": .string, "light_off_duration": .string])

    static let webpush = ObjectSchema(
        typeName: "google.firebase.fcm.v1.WebpushConfig",
        fields: [
            "headers": .stringMap, "data": .stringMap, "notification": .anyObject,
            "fcm_options": .message(
                ObjectSchema(
                    typeName: "google.firebase.fcm.v1.WebpushFcmOptions",
                    fields: ["link": .string, "analytics_label": .string])),
        ])

    static let apns = ObjectSchema(
        typeName: "google.firebase.fcm.v1.ApnsConfig",
        fields: [
            "headers": .stringMap, "payload": .anyObject, "live_activity_token": .string,
            "fcm_options": .message(
                ObjectSchema(
                    typeName: "google.firebase.fcm.v1.ApnsFcmOptions",
                    fields: ["analytics_label": .string, "image": .string])),
        ])
}
