import Testing

@testable import FCMSimulator

@Suite struct JSONParserTests {
    @Test func membersKeepTheirOrderAndValuesRoundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null],"c":{"d":"\u00e9\n\"x\"","e":-0.5e3}}"#
        let value = try JSONParser.parse(Array(text.utf8))
        #expect(value.members?.map(\.key) == ["b", "a", "c"])
        #expect(value["c"]?["d"] == .string("é\n\"x\""))
        #expect(value.serialized == #"{"b":1,"a":[true,false,null],"c":{"d":"é\n\"x\"","e":-0.5e3}}"#)
    }

    @Test func surrogatePairsBecomeOneScalar() throws {
        #expect(try JSONParser.parse(Array(#""\ud83d\ude00""#.utf8)) == .string("😀"))
    }

    @Test(arguments: [
        "", "{", #"{"a"}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", "tru", #""\x""#, #""\ud800""#, "{} {}",
        "\"a\u{01}\"",
    ])
    func malformedTextIsRefused(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func nestingIsBounded() throws {
        let deep =
            String(repeating: "[", count: JSONParser.maximumDepth)
            + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect(throws: Never.self) { try JSONParser.parse(Array(deep.utf8)) }
        let tooDeep = "[" + deep + "]"
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(tooDeep.utf8)) }
    }

    @Test(arguments: [("3.5s", 3.5), ("0s", 0), ("2419200s", 2_419_200), ("1.000000001s", 1.000000001)])
    func durationsAreRead(_ text: String, _ seconds: Double) {
        #expect(PayloadValidation.durationSeconds(text) == seconds)
    }

    @Test(arguments: ["1h", "s", ".5s", "1.s", "-1s", "1.0000000001s", "1e3s"])
    func malformedDurationsAreRefused(_ text: String) {
        #expect(PayloadValidation.durationSeconds(text) == nil)
    }
}
