import Foundation
import HeraldCore
import Testing

@Suite struct AppsFileTests {
    @Test func parsesTheContractShape() throws {
        let json = #"""
            {"apps": [{"id": "com.example.news", "topic": "com.example.news", "environment": "production",
                       "endpoint": "https://127.0.0.1:2197", "ca_file": "ca.pem",
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "AuthKey_K.p8"}},
                      {"id": "b", "topic": "com.b", "environment": "sandbox",
                       "auth": {"type": "certificate", "p12_file": "b.p12", "passphrase_env": "B_PASS"}}]}
            """#
        let file = try AppsFile.parse(Data(json.utf8))
        let news = try #require(file.app("com.example.news"))
        #expect(news.auth == .token(teamID: "T", keyID: "K", keyFile: "AuthKey_K.p8"))
        #expect(try news.resolvedEndpoint() == ("127.0.0.1", 2197))
        let b = try #require(file.app("b"))
        #expect(try b.resolvedEndpoint() == ("api.sandbox.push.apple.com", 443))
        #expect(news.maxPerSecond == nil && file.sendRate(app: news.id, throttle: nil) == nil)
    }

    @Test func anAppMayHaveFCMCredentialsInsteadOfAPNsOnesButNeedsOneProvider() throws {
        let androidOnly = #"""
            {"apps": [{"id": "a", "topic": "com.a", "environment": "production",
                       "fcm": {"service_account_file": "sa.json"}}]}
            """#
        let file = try AppsFile.parse(Data(androidOnly.utf8))
        #expect(file.app("a")?.auth == nil)
        #expect(file.app("a")?.fcm?.serviceAccountFile == "sa.json")
        let neither = #"{"apps": [{"id": "a", "topic": "com.a", "environment": "production"}]}"#
        #expect {
            try AppsFile.parse(Data(neither.utf8))
        } throws: { error in
            "\(error)"
                == "app a: no provider credentials: give auth (APNs), fcm (Android), webpush (browsers) or several"
        }
    }

    @Test func anAppsSendRateIsReadAndListed() throws {
        let json = #"""
            {"apps": [{"id": "a", "topic": "com.a", "environment": "production", "max_per_second": 500,
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k.p8"}},
                      {"id": "b", "topic": "com.b", "environment": "production",
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k.p8"}}]}
            """#
        let file = try AppsFile.parse(Data(json.utf8))
        #expect(file.app("a")?.maxPerSecond == 500)
        // The lower of the app's rate and the job's own; an app without one, or one not in the file, adds none.
        #expect(file.sendRate(app: "a", throttle: nil) == 500 && file.sendRate(app: "a", throttle: 20) == 20)
        #expect(file.sendRate(app: "a", throttle: 900) == 500 && file.sendRate(app: "b", throttle: nil) == nil)
        #expect(file.sendRate(app: "unknown", throttle: 7) == 7)
    }

    @Test(arguments: [
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}},{"id":"a","topic":"a","environment":"production","auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "listed twice"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","endpoint":"http://x","auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "https://"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"staging","auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "not valid"
        ),
        (#"{"apps":[{"id":"a","topic":"a","environment":"production","auth":{"type":"magic"}}]}"#, "not valid"),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","environments":["sandbox"],"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "environments must include environment"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","environments":["production","production"],"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "twice"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","endpoints":{"sandbox":"https://x"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "endpoints names sandbox, which environments does not list"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","environments":["production","sandbox"],"endpoints":{"staging":"https://x"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "staging, which is not production or sandbox"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","environments":["production","sandbox"],"endpoints":{"sandbox":"http://x"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "the sandbox endpoint must be an https:// URL"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","endpoint":"https://x","endpoints":{"production":"https://y"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "disagree"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","max_per_second":0,"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "app a: max_per_second must be 1 to 2147483647, not 0"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","max_per_second":2147483648,"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "max_per_second must be 1 to 2147483647"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","max_per_second":"10","auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "not valid"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","webhook":{"url":"http://x/hook","secret_file":"s"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "app a: webhook.url must be an https URL"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","webhook":{"url":"https://u:p@x/hook","secret_file":"s"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "no user info"
        ),
        (
            #"{"apps":[{"id":"a.#","topic":"a","environment":"production","webhook":{"url":"https://x/hook","secret_file":"s"},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "cannot have * or # in its id"
        ),
        (
            #"{"apps":[{"id":"a","topic":"a","environment":"production","webhook":{"url":"https://x/hook","secret_file":""},"auth":{"type":"token","team_id":"T","key_id":"K","key_file":"k"}}]}"#,
            "webhook.secret_file is empty"
        ),
    ])
    func rejectsBadFilesNamingTheProblem(json: String, expected: String) {
        #expect {
            _ = try AppsFile.parse(Data(json.utf8))
        } throws: { error in
            (error as? ConfigurationError)?.description.contains(expected) == true
        }
    }

    @Test func anAppMayServeBothEnvironmentsEachDeviceGoingWhereItRegistered() throws {
        let json = #"""
            {"apps": [{"id": "a", "topic": "com.a", "environment": "production",
                       "environments": ["production", "sandbox"],
                       "endpoints": {"sandbox": "https://127.0.0.1:2198"},
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k.p8"}},
                      {"id": "b", "topic": "com.b", "environment": "sandbox",
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k.p8"}}]}
            """#
        let file = try AppsFile.parse(Data(json.utf8))
        let a = try #require(file.app("a"))
        #expect(a.sendsPerDeviceEnvironment)
        #expect(try a.resolvedEndpoint(for: .production) == ("api.push.apple.com", 443))
        #expect(try a.resolvedEndpoint(for: .sandbox) == ("127.0.0.1", 2198))
        #expect(a.environment(ofDevice: "sandbox") == .sandbox)
        #expect(a.environment(ofDevice: "production") == .production)
        // No environment registered, or one that is not valid: the app's default.
        #expect(a.environment(ofDevice: nil) == .production)
        #expect(a.environment(ofDevice: "staging") == .production)
        // An app serving one environment sends every device there, whatever it registered.
        let b = try #require(file.app("b"))
        #expect(!b.sendsPerDeviceEnvironment)
        #expect(b.environment(ofDevice: "production") == .sandbox)
    }

    @Test func anAppsIdentitySecretIsReadWithoutItsNewlineAndMustBeLongEnough() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "0123456789abcdef0123\n".write(
            to: directory.appendingPathComponent("good"), atomically: true, encoding: .utf8)
        try "short\n".write(to: directory.appendingPathComponent("short"), atomically: true, encoding: .utf8)
        let json = #"""
            {"apps": [{"id": "a", "topic": "com.a", "environment": "production",
                       "identity": {"secret_file": "good"},
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k"}},
                      {"id": "b", "topic": "com.b", "environment": "production",
                       "identity": {"secret_file": "short", "required": false},
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k"}},
                      {"id": "c", "topic": "com.c", "environment": "production",
                       "auth": {"type": "token", "team_id": "T", "key_id": "K", "key_file": "k"}}]}
            """#
        let file = try AppsFile.parse(Data(json.utf8))
        let a = try #require(file.app("a"))
        #expect(a.identity?.isRequired == true)
        #expect(try a.identitySecret(directory: directory.path) == Array("0123456789abcdef0123".utf8))
        let b = try #require(file.app("b"))
        #expect(b.identity?.isRequired == false)
        do {
            _ = try b.identitySecret(directory: directory.path)
            Issue.record("a 5-byte secret was accepted")
        } catch {
            #expect(error.message.contains("16 to 1024 bytes") && !error.message.contains("short\n"))
        }
        #expect(try file.app("c")?.identitySecret(directory: directory.path) == nil)
    }
}
