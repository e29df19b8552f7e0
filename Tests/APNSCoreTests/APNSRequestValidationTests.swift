import APNSCore
import Testing

@Suite struct APNSRequestValidationTests {
    static func request(
        pushType: PushType = .alert,
        priority: Priority? = nil,
        collapseID: String? = nil,
        apnsID: APNSID? = nil,
        payload: String = #"{"aps":{"alert":"hi"}}"#
    ) -> APNSRequest {
        APNSRequest(
            deviceToken: DeviceToken(trustedHex: "aabb"),
            topic: pushType.topic(forBundleID: "com.example"),
            pushType: pushType,
            priority: priority,
            collapseID: collapseID,
            apnsID: apnsID,
            payload: Array(payload.utf8)
        )
    }

    static func payload(size: Int) -> String {
        let prefix = #"{"aps":{"alert":""#
        let suffix = #""}}"#
        return prefix + String(repeating: "x", count: size - prefix.count - suffix.count) + suffix
    }

    @Test func aValidRequestPasses() throws {
        try Self.request().validate()
    }

    @Test(arguments: [
        (PushType.alert, 4096, true), (.alert, 4097, false), (.voip, 5120, true), (.voip, 5121, false),
        (.liveactivity, 4096, true), (.widgets, 4097, false),
    ])
    func payloadLimitDependsOnPushType(pushType: PushType, size: Int, valid: Bool) {
        let request = Self.request(pushType: pushType, payload: Self.payload(size: size))
        #expect(request.payload.count == size)
        if valid {
            #expect(throws: Never.self) { try request.validate() }
        } else {
            #expect { try request.validate() } throws: { ($0 as? APNSValidationError)?.rule == .payloadTooLarge }
        }
    }

    @Test func collapseIDIsLimitedTo64Bytes() throws {
        try Self.request(collapseID: String(repeating: "c", count: 64)).validate()
        #expect {
            try Self.request(collapseID: String(repeating: "c", count: 65)).validate()
        } throws: {
            ($0 as? APNSValidationError)?.rule == .collapseIDTooLong
        }
    }

    @Test(arguments: [0, 2, 11])
    func priorityMustBe1Or5Or10(value: Int) {
        #expect {
            try Self.request(priority: Priority(rawValue: value)).validate()
        } throws: {
            ($0 as? APNSValidationError)?.rule == .invalidPriority
        }
    }

    @Test func backgroundNeedsContentAvailableAndPriority5() throws {
        let valid = #"{"aps":{"content-available":1}}"#
        try Self.request(pushType: .background, priority: .conservePower, payload: valid).validate()
        #expect {
            try Self.request(pushType: .background, priority: .immediate, payload: valid).validate()
        } throws: {
            ($0 as? APNSValidationError)?.rule == .backgroundPriority
        }
        #expect {
            try Self.request(pushType: .background, priority: .conservePower).validate()
        } throws: {
            ($0 as? APNSValidationError)?.rule == .backgroundNeedsContentAvailable
        }
    }

    @Test func apnsIDMustBeACanonicalLowercaseUUID() throws {
        let id = try #require(APNSID("123e4567-e89b-12d3-a456-426614174000"))
        #expect(id.description == "123e4567-e89b-12d3-a456-426614174000")
        #expect(id == APNSID(high: 0x123e_4567_e89b_12d3, low: 0xa456_4266_1417_4000))
        try Self.request(apnsID: id).validate()
        for text in [
            "123E4567-E89B-12D3-A456-426614174000", "123e4567e89b12d3a456426614174000",
            "123e4567-e89b-12d3-a456-4266141740001", "123e4567-e89b-12d3-a456-42661417400", "",
            "{123e4567-e89b-12d3-a456-426614174000}", "123e4567-e89b-12d3-a456_426614174000",
        ] {
            #expect(APNSID(text) == nil, "\(text)")
        }
    }

    @Test func topicsCarryThePushTypeSuffix() {
        #expect(PushType.voip.topic(forBundleID: "com.x") == "com.x.voip")
        #expect(PushType.liveactivity.topic(forBundleID: "com.x") == "com.x.push-type.liveactivity")
        #expect(PushType.alert.topic(forBundleID: "com.x") == "com.x")
        #expect(PushType.complication.topic(forBundleID: "com.x.complication") == "com.x.complication")
    }
}

@Suite struct DeviceTokenTests {
    @Test(arguments: [
        ("<ad853c20 3a9b1c2d>", "ad853c203a9b1c2d"), ("AD853C20", "ad853c20"), (" aabb ", "aabb"),
        // Already canonical (kept as it is), up to the 200-byte limit.
        ("ad853c20", "ad853c20"), (String(repeating: "0a", count: 200), String(repeating: "0a", count: 200)),
    ])
    func normalisesToLowercaseHex(input: String, expected: String) throws {
        #expect(try DeviceToken(parsing: input).hex == expected)
    }

    @Test(arguments: [
        ("", DeviceTokenError.Kind.empty), ("abc", .oddLength), ("zz", .notHexadecimal), ("<>", .empty),
        (String(repeating: "0a", count: 201), .tooLong),
    ])
    func rejectsWhatIsNotAToken(input: String, kind: DeviceTokenError.Kind) {
        #expect { try DeviceToken(parsing: input) } throws: { ($0 as? DeviceTokenError)?.kind == kind }
    }

    @Test func descriptionNeverShowsTheToken() throws {
        let token = try DeviceToken(parsing: "ad853c203a9b1c2d3e4f")
        #expect(!"\(token)".contains("ad853c20"))
        #expect(!String(reflecting: token).contains("ad853c20"))
        #expect("\(token)".hasSuffix("3e4f"))
    }
}
