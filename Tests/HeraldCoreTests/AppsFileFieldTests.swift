import Foundation
import HeraldCore
import Testing

/// A field the apps file does not define is refused, named with the nearest known one: a typo is never ignored.
@Suite struct AppsFileFieldTests {
    static let auth = #""auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k.p8"}"#

    static func app(_ extra: String, auth: String = AppsFileFieldTests.auth) -> String {
        #"{"apps": [{"id": "com.example.news", "topic": "com.example.news", "environment": "production", "#
            + extra + auth + "}]}"
    }

    @Test(arguments: [
        (
            app(#""max_per_secnd": 10, "#),
            "unknown field max_per_secnd in app com.example.news; did you mean max_per_second?"
        ),
        (
            app("", auth: #""auth": {"type": "token", "team_id": "T", "keyid": "K", "key_file": "k.p8"}"#),
            "unknown field keyid in the auth of app com.example.news; did you mean key_id?"
        ),
        (
            // A certificate's field under token auth would be ignored as surely as a typo.
            app(
                "", auth: #""auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k", "p12_file": "x"}"#
            ),
            "unknown field p12_file in the auth of app com.example.news; the known fields are type, team_id, key_id, "
                + "key_file"
        ),
        (
            app(#""webhook": {"url": "https://x/hook", "secret_fil": "s"}, "#),
            "unknown field secret_fil in the webhook of app com.example.news; did you mean secret_file?"
        ),
        (
            app(#""live_activities": {"frequent_update": true}, "#),
            "unknown field frequent_update in the live_activities of app com.example.news; did you mean "
                + "frequent_updates?"
        ),
        (
            app(#""identity": {"secret_file": "s", "requird": false}, "#),
            "unknown field requird in the identity of app com.example.news; did you mean required?"
        ),
        (
            app(#""auth_by_environment": {"sandbx": {"type": "token"}}, "#),
            "unknown field sandbx in the auth_by_environment of app com.example.news; did you mean sandbox?"
        ),
        (
            app(
                #""auth_by_environment": {"sandbox": {"type": "token", "team_id": "T", "key_id": "K", "key_fle": "k"}}, "#
            ),
            "unknown field key_fle in the auth_by_environment.sandbox of app com.example.news; did you mean key_file?"
        ),
        (#"{"apps": [], "version": 2}"#, "unknown field version in the apps file; the known fields are apps"),
        (#"{"aps": []}"#, "unknown field aps in the apps file; did you mean apps?"),
        (
            #"{"apps": [{"topc": "a"}]}"#,
            "unknown field topc in apps[0]; did you mean topic?"
        ),
    ])
    func anUnknownFieldIsRefusedWithTheNearestKnownOne(json: String, message: String) throws {
        let error = try #require(throws: ConfigurationError.self) { try AppsFile.parse(Data(json.utf8)) }
        #expect(error.message == message)
    }

    @Test func everyFieldTheFileDefinesIsAccepted() throws {
        let json = Self.app(
            #""environments": ["production", "sandbox"], "endpoint": "https://127.0.0.1:2197", "#
                + #""endpoints": {"sandbox": "https://127.0.0.1:2198"}, "ca_file": "ca.pem", "max_per_second": 5, "#
                + #""events": true, "webhook": {"url": "https://x/hook", "secret_file": "s", "ca_file": "c"}, "#
                + #""live_activities": {"channels_endpoint": "https://x", "broadcast_endpoint": "https://y", "#
                + #""frequent_updates": true, "priority_budget_per_hour": 5, "stale_after_seconds": 60, "#
                + #""dismiss_after_seconds": 60}, "identity": {"secret_file": "i", "required": true}, "#
                + #""auth_by_environment": {"sandbox": {"type": "token", "team_id": "T", "key_id": "S", "#
                + #""key_file": "s.p8"}}, "#)
        #expect(try AppsFile.parse(Data(json.utf8)).apps.count == 1)
    }

    @Test(arguments: [
        ("{\"apps\": [\n  {\"id\": \"a\",, \"topic\": \"a\"}\n]}", "line 2, column 14"),
        ("{\"apps\": [\n  {\"id\": \"a\"", "line 2, column 13"),
        ("{\"apps\": [{\"id\": \"é\" \"topic\": 1}]}", "line 1, column 22"),
    ])
    func invalidJSONNamesTheFileTheLineAndTheColumn(json: String, position: String) throws {
        let error = try #require(throws: ConfigurationError.self) {
            try AppsFile.parse(Data(json.utf8), path: "/etc/herald/apps.json")
        }
        #expect(error.message.hasPrefix("apps file /etc/herald/apps.json is not valid JSON: "), "\(error)")
        #expect(error.message.hasSuffix(" at \(position)"), "\(error)")
    }
}
