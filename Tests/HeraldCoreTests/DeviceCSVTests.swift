import APNSCore
import HeraldCore
import Testing

@Suite struct DeviceCSVTests {
    /// A token of 32 bytes, the shortest a device token may be.
    static let token = String(repeating: "aabb", count: 16)

    @Test func parsesARowWithTopicsAndTheSeedTokenForm() throws {
        let record = try DeviceCSV.parse(
            #""<AD853C20 3A9BAD85 3C203A9B AD853C20 3A9BAD85 3C203A9B AD853C20 3A9BAD85>",u1,zh-Hant-TW,sports; news"#,
            lineNumber: 2)
        #expect(record?.token.hex == String(repeating: "ad853c203a9b", count: 5) + "ad85")
        #expect(record?.userID == "u1")
        #expect(record?.locale == "zh-Hant-TW")
        #expect(record?.topics == ["sports", "news"])
    }

    @Test func emptyOptionalFieldsAreNil() throws {
        let record = try DeviceCSV.parse("\(Self.token),,,", lineNumber: 2)
        #expect(record == DeviceRecord(token: DeviceToken(trustedHex: Self.token)))
    }

    @Test(arguments: [
        ("xyz,u,en,", "not hexadecimal"),
        ("abc,u,en,", "odd number"),
        ("\(token),u,en", "expected 4 fields"),
        ("\(token),u,en us,", "BCP 47"),
        (#""\#(token),u,en,"#, "unterminated"),
        // The rules of the API's registration (DeviceFields), so that a file imports what the API registers.
        ("aabbccdd,u,en,", "a device token is 32 to 200 bytes"),
        ("\(token),u,1en,", "BCP 47"),
        ("\(token),u\u{85},en,", "user_id contains a control character"),
        ("\(token),u,en,\(String(repeating: "t", count: 129))", "topics is 129 characters, over 128"),
        ("\(token),u,en,sports\u{0};news", "NUL byte"),
        ("\(token),u\u{0}x,en,", "NUL byte"),
        ("\(token),u,en," + (0...100).map { "t\($0)" }.joined(separator: ";"), "topics has 101 entries; at most 100"),
    ])
    func badRowsNameTheirLineAndRule(line: String, expected: String) {
        #expect {
            _ = try DeviceCSV.parse(line, lineNumber: 7)
        } throws: { error in
            let text = (error as? DeviceCSV.RowError)?.description ?? ""
            return text.hasPrefix("line 7:") && text.contains(expected)
        }
    }

    @Test func headerMustMatch() throws {
        try DeviceCSV.validateHeader("token,user_id,locale,topics")
        #expect(throws: DeviceCSV.RowError.self) { try DeviceCSV.validateHeader("token,user") }
    }

    @Test func theHeaderMayAddPlatformAndThenFCMKind() throws {
        #expect(try DeviceCSV.validateHeader("token,user_id,locale,topics") == 4)
        #expect(try DeviceCSV.validateHeader("token,user_id,locale,topics,platform") == 5)
        #expect(try DeviceCSV.validateHeader("Token,User_ID,Locale,Topics,Platform,FCM_Kind") == 6)
        for bad in ["token,user_id,locale,topics,fcm_kind", "token,user_id,locale,topics,platform,fcm_kind,extra"] {
            #expect(throws: DeviceCSV.RowError.self) { try DeviceCSV.validateHeader(bad) }
        }
    }

    /// A registration token as Android apps get it: mixed case, `:` and `-`, here 159 characters.
    static let androidToken = "cXy-z_0:" + String(repeating: "APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx_", count: 4) + "Ab1"
    static let fid = "dIsVQ2QlSSyDRxQaO6LBcb"

    @Test func androidRowsKeepTheirTokensAsGivenWithTheirKind() throws {
        let token = try #require(
            try DeviceCSV.parse("\(Self.androidToken),u1,fr,news,android,", lineNumber: 2, columns: 6))
        #expect(token.token.hex == Self.androidToken)
        #expect(token.platform == .android && token.fcmKind == .token)
        #expect(token.userID == "u1" && token.topics == ["news"])
        let fid = try #require(try DeviceCSV.parse("\(Self.fid),,,,android,fid", lineNumber: 3, columns: 6))
        #expect(fid.token.hex == Self.fid && fid.platform == .android && fid.fcmKind == .fid)
        // Five columns: platform without a kind, a registration token.
        let five = try #require(try DeviceCSV.parse("\(Self.androidToken),,,,android", lineNumber: 4, columns: 5))
        #expect(five.fcmKind == .token)
    }

    @Test func oldFilesAndEmptyPlatformsAreIOS() throws {
        let old = try #require(try DeviceCSV.parse("\(Self.token.uppercased()),,,", lineNumber: 2))
        #expect(old.platform == .ios && old.fcmKind == nil && old.token.hex == Self.token)
        let empty = try #require(try DeviceCSV.parse("\(Self.token),,,,,", lineNumber: 2, columns: 6))
        #expect(empty.platform == .ios && empty.fcmKind == nil)
        #expect(try DeviceCSV.parse("\(Self.token),,,,ios,", lineNumber: 2, columns: 6)?.platform == .ios)
    }

    @Test(arguments: [
        ("\(token),,,,windows,", "platform must be ios, android or web"),
        ("\(token),,,,ios,token", "fcm_kind is for Android devices only"),
        ("\(androidToken),,,,android,apns", "fcm_kind must be token or fid"),
        ("\(androidToken),,,", "expected 6 fields, found 4"),
        // Each platform's own rules: an Android token is not hex, a hex token is too short for FCM, and so on.
        ("\(androidToken),,,,ios,", "not hexadecimal"),
        ("abcdef0123456789,,,,android,", "FCM registration token is too short (16 characters, at least 20)"),
        ("\(androidToken)!,,,,android,", "FCM registration token has a character not allowed (!) at position 160"),
        ("\(androidToken),,,,android,fid", "Firebase installation ID has 159 characters, not 22"),
        ("aIsVQ2QlSSyDRxQaO6LBcb,,,,android,fid", "starts with a, not c, d, e or f"),
        ("dIsVQ2QlSSyDRxQaO6LB:b,,,,android,fid", "installation id (fcm_kind fid) is 22 characters"),
    ])
    func badPlatformRowsNameTheirLineAndRuleButNeverTheToken(line: String, expected: String) {
        #expect {
            _ = try DeviceCSV.parse(line, lineNumber: 9, columns: 6)
        } throws: { error in
            let text = (error as? DeviceCSV.RowError)?.description ?? ""
            return text.hasPrefix("line 9:") && text.contains(expected) && !text.contains(Self.androidToken)
                && !text.contains("IsVQ2QlSSyDRxQaO6L")
        }
    }

    @Test func topicsUpToTheBoundsAreKept() throws {
        let topics = (0..<100).map { "t\($0)" }
        let record = try DeviceCSV.parse("\(Self.token),,," + topics.joined(separator: ";"), lineNumber: 2)
        #expect(record?.topics == topics)
        let long = String(repeating: "x", count: 128)
        #expect(try DeviceCSV.parse("\(Self.token),,,\(long)", lineNumber: 2)?.topics == [long])
    }

    @Test func blankLinesAreSkipped() throws {
        #expect(try DeviceCSV.parse("", lineNumber: 3) == nil)
    }
}
