import APNSCore
import APNSSimulator
import Foundation
import Testing

/// Requests for Live Activities: the device route with `apns-push-type: liveactivity`, and Apple's broadcast
/// endpoints (channel management and broadcast sends).
enum LiveActivityFixtures {
    static let bundle = Fixtures.topic
    static let topic = Fixtures.topic + ".push-type.liveactivity"
    static let requestID = "8d3c1f0e-5b7a-4c2e-9f1d-2a6b4e8c0d11"

    static let start = #"""
        {"aps":{"attributes":{"match":"A-B"},"attributes-type":"ScoreAttributes","content-state":{"a":0,"b":0},\#
        "event":"start","stale-date":1800003600,"timestamp":1800000000}}
        """#
    static let update = #"{"aps":{"content-state":{"a":1,"b":0},"event":"update","timestamp":1800000060}}"#
    static let end = #"{"aps":{"dismissal-date":1800007200,"event":"end","timestamp":1800000120}}"#

    /// A Live Activity push to a device; `extra` headers are appended.
    static func device(jwt: String, payload: String, topic: String = topic, extra: [(String, String)] = [])
        -> TestRequest
    {
        Fixtures.request(jwt: jwt, pushType: "liveactivity", topic: topic, extra: extra, body: Array(payload.utf8))
    }

    /// A channel-management request.
    static func management(
        _ method: String, _ resource: String = "channels", jwt: String, bundle: String = bundle,
        channelID: String? = nil, body: String = "", requestID: String? = requestID
    ) -> TestRequest {
        var headers: [(String, String)] = [
            (":method", method), (":scheme", "https"), (":path", "/1/apps/\(bundle)/\(resource)"),
            (":authority", "127.0.0.1"), ("authorization", "bearer \(jwt)"),
        ]
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        if let requestID { headers.append(("apns-request-id", requestID)) }
        return TestRequest(headers: headers, body: Array(body.utf8))
    }

    static func create(jwt: String, policy: Int, bundle: String = bundle) -> TestRequest {
        management(
            "POST", jwt: jwt, bundle: bundle, body: #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#
        )
    }

    /// A broadcast send; nil leaves a header out.
    static func broadcast(
        jwt: String, channelID: String?, payload: String = update, expiration: String? = "0",
        priority: String? = "10", topic: String? = topic, pushType: String? = "liveactivity", bundle: String = bundle
    ) -> TestRequest {
        var headers: [(String, String)] = [
            (":method", "POST"), (":scheme", "https"), (":path", "/4/broadcasts/apps/\(bundle)"),
            (":authority", "127.0.0.1"), ("authorization", "bearer \(jwt)"), ("apns-request-id", requestID),
        ]
        let optional: [(String, String?)] = [
            ("apns-channel-id", channelID), ("apns-push-type", pushType), ("apns-topic", topic),
            ("apns-expiration", expiration), ("apns-priority", priority),
        ]
        for (name, value) in optional { if let value { headers.append((name, value)) } }
        return TestRequest(headers: headers, body: Array(payload.utf8))
    }
}

/// One Live Activity push to a device and the answer it gets (nil reason: accepted).
struct LiveActivityCase: Sendable, CustomTestStringConvertible {
    var name: String
    var payload: String
    var extra: [(String, String)] = []
    var topic: String = LiveActivityFixtures.topic
    var status: Int = 400
    var reason: String? = "PayloadEmpty"

    var testDescription: String { "\(name) → \(reason.map { "\(status) \($0)" } ?? "200")" }

    static func accepted(_ name: String, _ payload: String, _ extra: [(String, String)] = []) -> Self {
        Self(name: name, payload: payload, extra: extra, status: 200, reason: nil)
    }

    static func refused(_ name: String, _ payload: String) -> Self {
        Self(name: name, payload: payload)
    }
}

@Suite struct LiveActivitySimulatorTests {
    typealias LA = LiveActivityFixtures

    static let deviceCases: [LiveActivityCase] = [
        .accepted("start with attributes", LA.start),
        .accepted("update at priority 5", LA.update, [("apns-priority", "5")]),
        .accepted("end with a dismissal date", LA.end),
        .refused("not JSON", "{aps"),
        .refused("no aps", #"{"event":"update"}"#),
        .refused("no timestamp", #"{"aps":{"content-state":{},"event":"update"}}"#),
        .refused("timestamp as a string", #"{"aps":{"content-state":{},"event":"update","timestamp":"1800000000"}}"#),
        .refused("timestamp with a fraction", #"{"aps":{"content-state":{},"event":"update","timestamp":1.5}}"#),
        .refused("no event", #"{"aps":{"content-state":{},"timestamp":1800000000}}"#),
        .refused("unknown event", #"{"aps":{"content-state":{},"event":"pause","timestamp":1800000000}}"#),
        .refused("update without content-state", #"{"aps":{"event":"update","timestamp":1800000000}}"#),
        .refused(
            "start without attributes-type",
            #"{"aps":{"attributes":{},"content-state":{},"event":"start","timestamp":1800000000}}"#),
        .refused(
            "start without attributes",
            #"{"aps":{"attributes-type":"T","content-state":{},"event":"start","timestamp":1800000000}}"#),
        .refused(
            "start without content-state",
            #"{"aps":{"attributes":{},"attributes-type":"T","event":"start","timestamp":1800000000}}"#),
        .refused(
            "stale-date as a string",
            #"{"aps":{"content-state":{},"event":"update","stale-date":"soon","timestamp":1800000000}}"#),
        .refused("dismissal-date with a fraction", #"{"aps":{"dismissal-date":1.5,"event":"end","timestamp":1}}"#),
        LiveActivityCase(name: "empty payload", payload: ""),
        LiveActivityCase(
            name: "priority 1", payload: LA.update, extra: [("apns-priority", "1")], reason: "BadPriority"),
        LiveActivityCase(
            name: "topic without the suffix", payload: LA.update, topic: LA.bundle, reason: "DeviceTokenNotForTopic"),
        LiveActivityCase(
            name: "another bundle's topic", payload: LA.update, topic: "com.example.other.push-type.liveactivity",
            reason: "TopicDisallowed"),
    ]

    @Test(arguments: deviceCases)
    func liveActivityPushIsCheckedForItsKeysPriorityAndTopic(_ testCase: LiveActivityCase) async throws {
        try await withHarness { (harness: Harness) async throws in
            let request = LA.device(
                jwt: harness.jwt, payload: testCase.payload, topic: testCase.topic, extra: testCase.extra)
            let response = try await harness.client.send(request)
            #expect(response.status == testCase.status, "\(response.body)")
            #expect(response.reason == testCase.reason)
            if testCase.reason == nil {
                let record = try #require(harness.simulator.records.first)
                #expect(record.pushType == "liveactivity")
                #expect(record.topic == LA.topic)
                #expect(record.priority == (testCase.extra.isEmpty ? 10 : 5))
                #expect(record.payload == testCase.payload)
            } else {
                #expect(harness.simulator.records.isEmpty)
            }
        }
    }

    @Test func channelIsCreatedShownListedAndDeleted() async throws {
        try await withHarness { (harness: Harness) async throws in
            let client = harness.client
            let created = try await client.send(LA.create(jwt: harness.jwt, policy: 1))
            #expect(created.status == 201)
            #expect(created.body.isEmpty)
            #expect(created.headers["apns-request-id"] == LA.requestID)
            let id = try #require(created.headers["apns-channel-id"])
            #expect(Data(base64Encoded: id)?.count == 16)
            #expect(harness.simulator.channels(bundleID: LA.bundle).map(\.id) == [id])
            #expect(harness.simulator.channels(bundleID: LA.bundle).first?.messageStoragePolicy == 1)

            let shown = try await client.send(LA.management("GET", jwt: harness.jwt, channelID: id))
            #expect(shown.status == 200)
            #expect(shown.headers["apns-channel-id"] == id)
            #expect(shown.headers["apns-request-id"] == LA.requestID)
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(shown.body.utf8)) as? [String: Any])
            #expect(fields["message-storage-policy"] as? Int == 1)
            #expect(fields["push-type"] as? String == "LiveActivity")

            let second = try await client.send(LA.create(jwt: harness.jwt, policy: 0))
            let secondID = try #require(second.headers["apns-channel-id"])
            let listed = try await client.send(LA.management("GET", "all-channels", jwt: harness.jwt))
            #expect(listed.status == 200)
            let list = try JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [String: [String]]
            #expect(list == ["channels": [id, secondID]])

            let deleted = try await client.send(LA.management("DELETE", jwt: harness.jwt, channelID: id))
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(deleted.headers["apns-request-id"] == LA.requestID)
            #expect(harness.simulator.channels(bundleID: LA.bundle).map(\.id) == [secondID])

            let gone = try await client.send(LA.management("GET", jwt: harness.jwt, channelID: id))
            #expect(gone.status == 400)
            #expect(gone.reason == "ChannelNotRegistered")
        }
    }

    @Test func answerWithoutARequestIDCarriesANewUUID() async throws {
        try await withHarness { (harness: Harness) async throws in
            let request = LA.management("GET", "all-channels", jwt: harness.jwt, requestID: nil)
            let response = try await harness.client.send(request)
            #expect(response.status == 200)
            #expect(response.body == #"{"channels":[]}"#)
            #expect(response.headers["apns-request-id"].map(APNSRequest.isCanonicalUUID) == true)
        }
    }

    @Test func channelBeyondTheQuotaIsRefusedWithCannotCreateChannelConfig() async throws {
        try await withHarness {
            $0.maximumChannelsPerApp = 2
        } _: { (harness: Harness) async throws in
            for _ in 0..<2 {
                #expect(try await harness.client.send(LA.create(jwt: harness.jwt, policy: 0)).status == 201)
            }
            let third = try await harness.client.send(LA.create(jwt: harness.jwt, policy: 0))
            #expect(third.status == 400)
            #expect(third.reason == "CannotCreateChannelConfig")
            #expect(third.headers["apns-channel-id"] == nil)
            #expect(harness.simulator.channels(bundleID: LA.bundle).count == 2)
        }
    }

    @Test func bundleWithoutBroadcastIsAnsweredFeatureNotEnabledEverywhere() async throws {
        try await withHarness {
            $0.broadcastDisabledBundles = [LA.bundle]
        } _: { (harness: Harness) async throws in
            let jwt = harness.jwt
            let requests = [
                LA.create(jwt: jwt, policy: 0), LA.management("GET", jwt: jwt, channelID: "AAAA"),
                LA.management("DELETE", jwt: jwt, channelID: "AAAA"), LA.management("GET", "all-channels", jwt: jwt),
                LA.broadcast(jwt: jwt, channelID: "AAAA"),
            ]
            for request in requests {
                let response = try await harness.client.send(request)
                #expect(response.status == 403)
                #expect(response.reason == "FeatureNotEnabled")
                #expect(response.headers["apns-request-id"] == LA.requestID)
            }
            #expect(harness.simulator.counts == ["403 FeatureNotEnabled": 5])
        }
    }

    /// One management or broadcast request that breaks a rule, built once the harness has its JWT and a channel.
    struct RefusalCase: Sendable, CustomTestStringConvertible {
        var name: String
        var status: Int
        var reason: String
        var build: @Sendable (_ jwt: String, _ channelID: String) -> TestRequest
        var testDescription: String { "\(name) → \(status) \(reason)" }
    }

    static let refusals: [RefusalCase] = [
        RefusalCase(name: "show without a channel id", status: 400, reason: "MissingChannelId") { jwt, _ in
            LA.management("GET", jwt: jwt)
        },
        RefusalCase(name: "delete without a channel id", status: 400, reason: "MissingChannelId") { jwt, _ in
            LA.management("DELETE", jwt: jwt)
        },
        RefusalCase(name: "broadcast without a channel id", status: 400, reason: "MissingChannelId") { jwt, _ in
            LA.broadcast(jwt: jwt, channelID: nil)
        },
        RefusalCase(name: "show with a channel id not base64", status: 400, reason: "BadChannelId") { jwt, _ in
            LA.management("GET", jwt: jwt, channelID: "not base64!")
        },
        RefusalCase(name: "broadcast with a channel id too long", status: 400, reason: "BadChannelId") { jwt, _ in
            LA.broadcast(jwt: jwt, channelID: String(repeating: "QUFB", count: 40))
        },
        RefusalCase(name: "show an unknown channel", status: 400, reason: "ChannelNotRegistered") { jwt, _ in
            LA.management("GET", jwt: jwt, channelID: "dW5rbm93bi1jaGFubmVs")
        },
        RefusalCase(name: "delete an unknown channel", status: 400, reason: "ChannelNotRegistered") { jwt, _ in
            LA.management("DELETE", jwt: jwt, channelID: "dW5rbm93bi1jaGFubmVs")
        },
        RefusalCase(name: "broadcast to an unknown channel", status: 400, reason: "ChannelNotRegistered") { jwt, _ in
            LA.broadcast(jwt: jwt, channelID: "dW5rbm93bi1jaGFubmVs")
        },
        RefusalCase(name: "show another bundle's channel", status: 400, reason: "ChannelNotRegistered") { jwt, id in
            LA.management("GET", jwt: jwt, bundle: "com.example.second", channelID: id)
        },
        RefusalCase(name: "create without push-type", status: 400, reason: "MissingPushType") { jwt, _ in
            LA.management("POST", jwt: jwt, body: #"{"message-storage-policy":0}"#)
        },
        RefusalCase(name: "create with push-type alert", status: 400, reason: "InvalidPushType") { jwt, _ in
            LA.management("POST", jwt: jwt, body: #"{"message-storage-policy":0,"push-type":"alert"}"#)
        },
        RefusalCase(name: "create with storage policy 2", status: 400, reason: "BadRequestPayload") { jwt, _ in
            LA.management("POST", jwt: jwt, body: #"{"message-storage-policy":2,"push-type":"LiveActivity"}"#)
        },
        RefusalCase(name: "create with a body not JSON", status: 400, reason: "BadRequestPayload") { jwt, _ in
            LA.management("POST", jwt: jwt, body: "policy=0")
        },
        RefusalCase(name: "create with a body over 1 KB", status: 413, reason: "PayloadTooLarge") { jwt, _ in
            LA.management("POST", jwt: jwt, body: String(repeating: " ", count: 1025))
        },
        RefusalCase(name: "list with POST", status: 405, reason: "MethodNotAllowed") { jwt, _ in
            LA.management("POST", "all-channels", jwt: jwt)
        },
        RefusalCase(name: "channels with PUT", status: 405, reason: "MethodNotAllowed") { jwt, _ in
            LA.management("PUT", jwt: jwt)
        },
        RefusalCase(name: "unknown management resource", status: 404, reason: "BadPath") { jwt, _ in
            LA.management("GET", "channel", jwt: jwt)
        },
        RefusalCase(name: "management path without a bundle", status: 404, reason: "BadPath") { jwt, _ in
            LA.management("GET", jwt: jwt, bundle: "")
        },
        RefusalCase(name: "management without authorization", status: 403, reason: "MissingProviderToken") { jwt, _ in
            var request = LA.management("GET", "all-channels", jwt: jwt)
            request.headers.removeAll { $0.0 == "authorization" }
            return request
        },
        RefusalCase(name: "broadcast with a garbage JWT", status: 403, reason: "InvalidProviderToken") { _, id in
            LA.broadcast(jwt: "not.a.jwt", channelID: id)
        },
        RefusalCase(name: "broadcast without push type", status: 400, reason: "MissingPushType") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, pushType: nil)
        },
        RefusalCase(name: "broadcast with push type alert", status: 400, reason: "InvalidPushType") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, pushType: "alert")
        },
        RefusalCase(name: "broadcast to the bare bundle topic", status: 400, reason: "TopicMismatch") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, topic: LA.bundle)
        },
        RefusalCase(name: "broadcast to another bundle's topic", status: 400, reason: "TopicMismatch") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, topic: "com.example.other.push-type.liveactivity")
        },
        RefusalCase(name: "broadcast at priority 1", status: 400, reason: "BadPriority") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, priority: "1")
        },
        RefusalCase(name: "broadcast expiring tomorrow on policy 0", status: 400, reason: "BadExpirationDate") {
            jwt, id in LA.broadcast(jwt: jwt, channelID: id, expiration: "1800086400")
        },
        RefusalCase(name: "broadcast without expiration on policy 0", status: 400, reason: "BadExpirationDate") {
            jwt, id in LA.broadcast(jwt: jwt, channelID: id, expiration: nil)
        },
        RefusalCase(name: "broadcast with expiration not a number", status: 400, reason: "BadExpirationDate") {
            jwt, id in LA.broadcast(jwt: jwt, channelID: id, expiration: "never")
        },
        RefusalCase(name: "broadcast of 5121 bytes", status: 413, reason: "PayloadTooLarge") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, payload: String(repeating: " ", count: 5121))
        },
        RefusalCase(name: "broadcast with an empty payload", status: 400, reason: "PayloadEmpty") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, payload: "")
        },
        RefusalCase(name: "broadcast starting an activity", status: 400, reason: "PayloadEmpty") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, payload: LA.start)
        },
        RefusalCase(name: "broadcast update without content-state", status: 400, reason: "PayloadEmpty") { jwt, id in
            LA.broadcast(jwt: jwt, channelID: id, payload: #"{"aps":{"event":"update","timestamp":1}}"#)
        },
        RefusalCase(name: "broadcast with GET", status: 405, reason: "MethodNotAllowed") { jwt, id in
            var request = LA.broadcast(jwt: jwt, channelID: id)
            request.headers[0] = (":method", "GET")
            return request
        },
        RefusalCase(name: "broadcast for a bundle not allowed", status: 400, reason: "TopicDisallowed") { jwt, id in
            LA.broadcast(
                jwt: jwt, channelID: id, topic: "com.example.other.push-type.liveactivity", bundle: "com.example.other")
        },
    ]

    @Test(arguments: refusals)
    func broadcastRequestBreakingARuleIsRefusedWithAppleStatusAndReason(_ testCase: RefusalCase) async throws {
        try await withHarness {
            $0.topics = [LA.bundle, "com.example.second"]
        } _: { (harness: Harness) async throws in
            let channel = harness.simulator.addChannel(bundleID: LA.bundle, messageStoragePolicy: 0)
            let response = try await harness.client.send(testCase.build(harness.jwt, channel.id))
            #expect(response.status == testCase.status)
            #expect(response.reason == testCase.reason)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["apns-request-id"] != nil)
            #expect(harness.simulator.broadcasts.isEmpty)
            #expect(harness.simulator.channels(bundleID: LA.bundle) == [channel])
            #expect(harness.simulator.counts == ["\(testCase.status) \(testCase.reason)": 1])
        }
    }

    @Test func broadcastOnPolicyZeroWithExpirationZeroIsAcceptedAndRecorded() async throws {
        try await withHarness { (harness: Harness) async throws in
            let channel = harness.simulator.addChannel(bundleID: LA.bundle, messageStoragePolicy: 0)
            async let arrived: Void = harness.simulator.waitForBroadcasts(count: 1)
            let request = LA.broadcast(jwt: harness.jwt, channelID: channel.id, priority: "5")
            let response = try await harness.client.send(request)
            await arrived
            #expect(response.status == 200, "\(response.body)")
            #expect(response.body.isEmpty)
            #expect(response.headers["apns-request-id"] == LA.requestID)
            #expect(response.headers["apns-unique-id"].map(APNSRequest.isCanonicalUUID) == true)
            #expect(
                harness.simulator.broadcasts == [
                    APNSSimulatorBroadcastRecord(
                        bundleID: LA.bundle, channelID: channel.id, pushType: "liveactivity", topic: LA.topic,
                        priority: 5, expiration: 0, requestID: LA.requestID, payload: LA.update,
                        receivedAt: harness.clock.now * 1000)
                ]
            )
            #expect(harness.simulator.records.isEmpty)
        }
    }

    @Test func broadcastOnPolicyOneMayExpireLaterAndEndTheActivity() async throws {
        try await withHarness { (harness: Harness) async throws in
            let created = try await harness.client.send(LA.create(jwt: harness.jwt, policy: 1))
            let id = try #require(created.headers["apns-channel-id"])
            let expiration = String(harness.clock.now + 3600)
            let update = try await harness.client.send(
                LA.broadcast(jwt: harness.jwt, channelID: id, expiration: expiration))
            let end = try await harness.client.send(
                LA.broadcast(
                    jwt: harness.jwt, channelID: id, payload: LA.end, expiration: nil, priority: nil, topic: nil))
            #expect(update.status == 200, "\(update.body)")
            #expect(end.status == 200, "\(end.body)")
            let broadcasts = harness.simulator.broadcasts
            #expect(broadcasts.map(\.expiration) == [harness.clock.now + 3600, nil])
            #expect(broadcasts.map(\.priority) == [10, 10])
            #expect(broadcasts.map(\.payload) == [LA.update, LA.end])
            #expect(broadcasts.last?.topic == nil)
        }
    }

    @Test func broadcastOfExactly5120BytesIsAccepted() async throws {
        try await withHarness { (harness: Harness) async throws in
            let channel = harness.simulator.addChannel(bundleID: LA.bundle, messageStoragePolicy: 1)
            let padding = String(repeating: "x", count: 5120 - LA.update.utf8.count - #","pad":"""#.utf8.count)
            let payload = String(LA.update.dropLast()) + #","pad":"\#(padding)"}"#
            #expect(payload.utf8.count == 5120)
            let response = try await harness.client.send(
                LA.broadcast(jwt: harness.jwt, channelID: channel.id, payload: payload))
            #expect(response.status == 200, "\(response.body)")
        }
    }
}
