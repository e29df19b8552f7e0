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
    ])
    func rejectsBadFilesNamingTheProblem(json: String, expected: String) {
        #expect {
            _ = try AppsFile.parse(Data(json.utf8))
        } throws: { error in
            (error as? ConfigurationError)?.description.contains(expected) == true
        }
    }
}
