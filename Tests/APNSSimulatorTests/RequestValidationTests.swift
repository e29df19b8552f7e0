import APNSCore
import Foundation
import Testing

@testable import APNSSimulator

/// The stateless checks, without a network: order and edge cases that are awkward to reach over HTTP/2.
@Suite struct RequestValidationTests {
    static let base: [(name: String, value: String)] = [
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/abcd"), ("authorization", "bearer x.y.z"),
        ("apns-topic", "com.example.app"),
    ]

    @Test func repeatedHeadersAreCheckedBeforeTheMethod() {
        let headers = [(name: ":method", value: "GET")] + Self.base
        #expect(RequestValidation.target(headers).failureReason == "DuplicateHeaders")
    }

    @Test func tokenIsLowerCasedAndBearerExtracted() throws {
        var headers = Self.base
        headers[2].value = "/3/device/ABCD"
        let target = try RequestValidation.target(headers).get()
        #expect(target.deviceToken == "abcd")
        #expect(try RequestValidation.bearer(target.authorization).get() == "x.y.z")
        #expect(RequestValidation.bearer(nil).failureReason == "MissingProviderToken")
        #expect(RequestValidation.bearer("bearer ").failureReason == "InvalidProviderToken")
    }

    @Test(arguments: [
        ("voip", "com.example.app.voip", "com.example.app"),
        ("complication", "com.example.app.complication", "com.example.app"),
        ("controls", "com.example.app.push-type.controls", "com.example.app"),
        ("fileprovider", "com.example.app.pushkit.fileprovider", "com.example.app"),
        ("location", "com.example.app.location-query", "com.example.app"),
        ("pushtotalk", "com.example.app.voip-ptt", "com.example.app"),
        ("widgets", "com.example.app.push-type.widgets", "com.example.app"),
        ("alert", "com.example.app", "com.example.app"),
        ("mdm", "com.apple.mgmt.External.1234", "com.apple.mgmt.External.1234"),
    ])
    func topicSuffixIsStrippedToTheBundleID(pushType: String, topic: String, bundleID: String) throws {
        let headers: [(name: String, value: String)] = [("apns-topic", topic), ("apns-push-type", pushType)]
        let fields = try RequestValidation.fields(headers, payloadSize: 10, allowedBundleIDs: [bundleID]).get()
        #expect(fields.bundleID == bundleID)
    }

    @Test func suffixOnlyTopicIsNotForTheToken() {
        let headers: [(name: String, value: String)] = [("apns-topic", ".voip"), ("apns-push-type", "voip")]
        #expect(
            RequestValidation.fields(headers, payloadSize: 10, allowedBundleIDs: nil).failureReason
                == "DeviceTokenNotForTopic")
    }

    @Test func topicWithWhitespaceIsBad() {
        let headers: [(name: String, value: String)] = [("apns-topic", "com.example app")]
        #expect(RequestValidation.fields(headers, payloadSize: 10, allowedBundleIDs: nil).failureReason == "BadTopic")
    }

    @Test func negativeExpirationIsBad() {
        let headers: [(name: String, value: String)] = [("apns-topic", "a"), ("apns-expiration", "-1")]
        #expect(
            RequestValidation.fields(headers, payloadSize: 10, allowedBundleIDs: nil).failureReason
                == "BadExpirationDate")
    }

    @Test func rejectionBodyIsAppleJSON() {
        #expect(Rejection(400, .badTopic).body == #"{"reason":"BadTopic"}"#)
        #expect(Rejection(410, .unregistered, timestamp: 42).body == #"{"reason":"Unregistered","timestamp":42}"#)
        #expect(Rejection(status: 500, reason: #"a"b"#).body == #"{"reason":"a\"b"}"#)
    }
}

extension Result where Failure == Rejection {
    var failureReason: String? {
        if case .failure(let rejection) = self { return rejection.reason }
        return nil
    }
}

@Suite struct APNSSimulatorScenarioTests {
    @Test func scenarioJSONOverridesOnlyWhatItSets() throws {
        let json = #"""
            {"deadTokenPrefixes": ["dead"], "goAwayAfterStreams": 5, "responseDelayMilliseconds": 7,
             "injectedFailures": [{"status": 503, "reason": "ServiceUnavailable", "every": 10}]}
            """#
        let scenario = try JSONDecoder().decode(APNSSimulatorScenario.self, from: Data(json.utf8))
        var configuration = APNSSimulatorConfiguration(
            certificateChainPEM: "",
            privateKeyPEM: "",
            providerKeys: [:]
        )
        configuration.maxConcurrentStreams = 42
        configuration.apply(scenario)
        #expect(configuration.deadTokenPrefixes == ["dead"])
        #expect(configuration.goAwayAfterStreams == 5)
        #expect(configuration.responseDelay == .milliseconds(7))
        #expect(configuration.injectedFailures == [.serviceUnavailable(every: 10)])
        #expect(configuration.maxConcurrentStreams == 42)
    }
}
