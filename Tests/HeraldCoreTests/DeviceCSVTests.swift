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
