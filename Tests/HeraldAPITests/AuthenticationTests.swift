import HeraldAPI
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// API keys: 401 without or with a wrong key, 403 with another app's key, on every /v1 route; keys never echoed.
@Suite(.needsServices) struct AuthenticationTests {
    static func routes(app: String, job: String) -> [(HTTPRequest.Method, String, String?)] {
        let token = APIHarness.token(1)
        return [
            (.post, "/v1/apps/\(app)/devices", #"{"token": "\#(token)"}"#),
            (.get, "/v1/apps/\(app)/devices/\(token)", nil),
            (.delete, "/v1/apps/\(app)/devices/\(token)", nil),
            (
                .post, "/v1/apps/\(app)/notifications",
                #"{"target": {"all": true}, "notification": {"aps": {"alert": "x"}}}"#
            ),
            (.get, "/v1/apps/\(app)/reports/dead-tokens", nil),
            (.get, "/v1/jobs/\(job)", nil),
            (.delete, "/v1/jobs/\(job)", nil),
        ]
    }

    @Test func missingOrWrongKeysAre401OnEveryRoute() async throws {
        try await APIHarness.run { h in
            let wrong = APIKey.generate()
            for (method, uri, body) in Self.routes(app: APIHarness.appA, job: "job-1") {
                for headers: HTTPFields in [
                    [:], [.authorization: "Bearer \(wrong)"], [.authorization: "Basic \(h.keyA)"],
                    [.authorization: "Bearer"],
                ] {
                    let response = try await h.client.execute(
                        uri: uri, method: method, headers: headers, body: body.map { .init(string: $0) }
                    )
                    #expect(response.status == .unauthorized, "\(method) \(uri)")
                    #expect(response.errorCode == "unauthorized")
                    #expect(response.headers[.wwwAuthenticate] != nil)
                    #expect(!response.text.contains(wrong) && !response.text.contains(h.keyA))
                }
            }
            #expect(try await h.store.deviceCount(app: APIHarness.appA) == 0)
        }
    }

    @Test func anotherAppsKeyIs403AndSeesNothingOfIt() async throws {
        try await APIHarness.run { h in
            let token = APIHarness.token(1)
            _ = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/devices", key: h.keyA, json: #"{"token": "\#(token)"}"#)
            let accepted = try await h.request(
                .post, "/v1/apps/\(APIHarness.appA)/notifications", key: h.keyA,
                json: #"{"target": {"topic": "sports"}, "notification": {"aps": {"alert": "x"}}}"#,
                headers: [.init("Idempotency-Key")!: "job-of-a"]
            )
            #expect(accepted.status == .accepted)
            for (method, uri, body) in Self.routes(app: APIHarness.appA, job: "job-of-a") {
                let response = try await h.request(method, uri, key: h.keyB, json: body)
                if uri.hasPrefix("/v1/jobs/") {
                    // Job ids are scoped by the key's app: app B has no job "job-of-a", and is not told that app A
                    // has one.
                    #expect(response.status == .notFound, "\(method) \(uri)")
                    #expect(response.errorCode == "not_found")
                } else {
                    #expect(response.status == .forbidden, "\(method) \(uri)")
                    #expect(response.errorCode == "forbidden")
                }
            }
            // Nothing of app A changed, and app B's own view has none of A's devices.
            #expect(try await h.store.device(app: APIHarness.appA, token: .init(trustedHex: token)) != nil)
            #expect(try await h.store.job(app: APIHarness.appA, id: "job-of-a")?.state == .queued)
            let own = try await h.request(.get, "/v1/apps/\(APIHarness.appB)/devices/\(token)", key: h.keyB)
            #expect(own.status == .notFound)
            #expect(try await h.store.deviceCount(app: APIHarness.appB) == 0)
        }
    }

    @Test func revokedKeysStopWorking() async throws {
        try await APIHarness.run { h in
            let uri = "/v1/apps/\(APIHarness.appB)/reports/dead-tokens"
            #expect(try await h.request(.get, uri, key: h.keyB).status == .ok)
            let key = try #require(try await h.store.apiKeys(app: APIHarness.appB).first)
            #expect(key.prefix == APIKey.prefix(h.keyB))
            #expect(try await h.store.revokeAPIKey(id: key.id, app: APIHarness.appB))
            #expect(try await h.request(.get, uri, key: h.keyB).status == .unauthorized)
        }
    }

    @Test func keysAreRandomAndOnlyTheirHashIsStored() {
        let a = APIKey.generate()
        let b = APIKey.generate()
        #expect(a != b)
        #expect(a.hasPrefix("hk_") && a.count == 46)
        #expect(APIKey.hash(a).count == 64)
        #expect(APIKey.hash(a) != APIKey.hash(b))
        #expect(!APIKey.hash(a).contains(a))
    }
}
