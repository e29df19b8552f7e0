import APNSCore
import HeraldCore
import Testing

@Suite struct DeviceCSVTests {
    @Test func parsesARowWithTopicsAndTheSeedTokenForm() throws {
        let record = try DeviceCSV.parse(#""<AD853C20 3A9B>",u1,zh-Hant-TW,sports; news"#, lineNumber: 2)
        #expect(record?.token.hex == "ad853c203a9b")
        #expect(record?.userID == "u1")
        #expect(record?.locale == "zh-Hant-TW")
        #expect(record?.topics == ["sports", "news"])
    }

    @Test func emptyOptionalFieldsAreNil() throws {
        let record = try DeviceCSV.parse("aabb,,,", lineNumber: 2)
        #expect(record == DeviceRecord(token: DeviceToken(trustedHex: "aabb")))
    }

    @Test(arguments: [
        ("xyz,u,en,", "not hexadecimal"),
        ("abc,u,en,", "odd number"),
        ("aabb,u,en", "expected 4 fields"),
        ("aabb,u,en us,", "BCP 47"),
        (#""aabb,u,en,"#, "unterminated"),
        ("aabb,u,en,sports\u{0};news", "NUL byte"),
        ("aabb,u\u{0}x,en,", "NUL byte"),
        ("aabb,u,en," + (0...100).map { "t\($0)" }.joined(separator: ";"), "topics has 101 entries; at most 100"),
        ("aabb,u,en,news;" + String(repeating: "x", count: 129), "topic 2 is longer than 128 bytes (129)"),
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
        let record = try DeviceCSV.parse("aabb,,," + topics.joined(separator: ";"), lineNumber: 2)
        #expect(record?.topics == topics)
        let long = String(repeating: "x", count: 128)
        #expect(try DeviceCSV.parse("aabb,,,\(long)", lineNumber: 2)?.topics == [long])
    }

    @Test func blankLinesAreSkipped() throws {
        #expect(try DeviceCSV.parse("", lineNumber: 3) == nil)
    }
}
