import APNSCore
import Foundation

extension AppsFile {
    /// The apps file as a JSON tree, or an error naming the file and the line and column where it stops being JSON.
    static func jsonTree(_ data: Data, path: String?) throws(ConfigurationError) -> PayloadValue {
        do {
            return try PayloadValue(json: data)
        } catch {
            let (line, column) = JSONTextPosition.lineAndColumn(ofByte: error.offset, in: data)
            throw ConfigurationError(
                "apps file\(path.map { " \($0)" } ?? "") is not valid JSON: \(error.message) at line \(line), "
                    + "column \(column)")
        }
    }

    /// Refuses a field the apps file does not define, naming it, where it is, and the known field nearest to it:
    /// `unknown field max_per_secnd in app com.example.news; did you mean max_per_second?`. A typo would otherwise
    /// be ignored in silence (the setting it meant left at its default).
    static func checkFields(_ tree: PayloadValue) throws(ConfigurationError) {
        guard case .object(let top) = tree else { return }  // The decoder names the wrong shape.
        try refuseUnknown(in: top, known: ["apps"], place: "the apps file")
        guard case .array(let apps)? = top["apps"] else { return }
        for (index, entry) in apps.enumerated() {
            guard case .object(let app) = entry else { continue }
            let name: String
            if case .string(let id)? = app["id"] { name = "app \(id)" } else { name = "apps[\(index)]" }
            try refuseUnknown(in: app, known: AppConfiguration.CodingKeys.allCases.map(\.stringValue), place: name)
            if case .object(let auth)? = app["auth"] {
                try checkAuthentication(auth, place: "the auth of \(name)")
            }
            if case .object(let environments)? = app["auth_by_environment"] {
                try refuseUnknown(
                    in: environments, known: AppConfiguration.Environment.allCases.map(\.rawValue),
                    place: "the auth_by_environment of \(name)")
                for (environment, entry) in environments.sorted(by: { $0.key < $1.key }) {
                    guard case .object(let auth) = entry else { continue }
                    try checkAuthentication(auth, place: "the auth_by_environment.\(environment) of \(name)")
                }
            }
            if case .object(let identity)? = app["identity"] {
                try refuseUnknown(
                    in: identity, known: AppConfiguration.Identity.CodingKeys.allCases.map(\.stringValue),
                    place: "the identity of \(name)")
            }
            if case .object(let webhook)? = app["webhook"] {
                try refuseUnknown(
                    in: webhook, known: AppConfiguration.Webhook.CodingKeys.allCases.map(\.stringValue),
                    place: "the webhook of \(name)")
            }
            if case .object(let fcm)? = app["fcm"] {
                try refuseUnknown(
                    in: fcm, known: AppConfiguration.FCM.CodingKeys.allCases.map(\.stringValue),
                    place: "the fcm of \(name)")
            }
            if case .object(let webpush)? = app["webpush"] {
                try refuseUnknown(
                    in: webpush, known: AppConfiguration.WebPush.CodingKeys.allCases.map(\.stringValue),
                    place: "the webpush of \(name)")
            }
            if case .object(let settings)? = app["live_activities"] {
                try refuseUnknown(
                    in: settings, known: LiveActivitySettings.CodingKeys.allCases.map(\.stringValue),
                    place: "the live_activities of \(name)")
            }
        }
    }

    /// An `auth` object's fields: those of its `type`.
    private static func checkAuthentication(_ auth: [String: PayloadValue], place: String) throws(ConfigurationError) {
        let known: [AppConfiguration.Authentication.CodingKeys] =
            switch auth["type"] {
            case .string("certificate")?: [.type, .p12File, .passphraseEnv]
            case .string("token")?: [.type, .teamID, .keyID, .keyFile]
            default: AppConfiguration.Authentication.CodingKeys.allCases
            }
        try refuseUnknown(in: auth, known: known.map(\.stringValue), place: place)
    }

    private static func refuseUnknown(
        in object: [String: PayloadValue], known: [String], place: String
    ) throws(ConfigurationError) {
        guard let unknown = object.keys.filter({ !known.contains($0) }).sorted().first else { return }
        if let nearest = NearestName.suggestion(for: unknown, among: known) {
            throw ConfigurationError("unknown field \(unknown) in \(place); did you mean \(nearest)?")
        }
        throw ConfigurationError(
            "unknown field \(unknown) in \(place); the known fields are \(known.joined(separator: ", "))")
    }
}
