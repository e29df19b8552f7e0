import Foundation
import HeraldCommandLine
import HeraldCore
import Testing

/// What `herald` prints when a command fails: a sentence naming what was wrong, never a library's debug dump.
@Suite struct ErrorSentenceTests {
    @Test func aMissingFileNamesItsPathAndTheFix() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID()).p8").path
        let error = try #require(throws: (any Error).self) { try String(contentsOfFile: path, encoding: .utf8) }
        let sentence = ErrorSentence.describing(error)
        #expect(
            sentence
                == "cannot read \(path): no such file (check the path and the flag or HERALD_* variable that names it)")
        #expect(!sentence.contains("Error Domain") && !sentence.contains("UserInfo"))
    }

    @Test func aFileThatIsNotTextSaysSo() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("binary-\(UUID())").path
        try Data([0xff, 0xfe, 0xc3, 0x28]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: (any Error).self) { try String(contentsOfFile: path, encoding: .utf8) }
        // Foundation on Linux does not say which file: the command's own message does (`InputFiles`).
        let sentence = ErrorSentence.describing(error)
        #expect(sentence.hasPrefix("cannot read") && sentence.hasSuffix(": it is not UTF-8 text"))
    }

    @Test func aDocumentOfTheWrongShapeNamesTheField() throws {
        let json = #"{"apps": [{"id": "a", "topic": "a", "environment": "staging", "auth": {"type": "token"}}]}"#
        let error = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(AppsFile.self, from: Data(json.utf8))
        }
        #expect(ErrorSentence.describing(error) == "apps[0].environment must be production or sandbox")
        let missing = try #require(throws: DecodingError.self) {
            try JSONDecoder().decode(AppsFile.self, from: Data(#"{"apps": [{"id": "a"}]}"#.utf8))
        }
        #expect(ErrorSentence.describing(missing).hasPrefix("apps[0] has no \""))
        let parse = try #require(throws: ConfigurationError.self) { try AppsFile.parse(Data(json.utf8)) }
        #expect(parse.message == "apps file is not valid: apps[0].environment must be production or sandbox")
    }

    @Test func heraldsOwnErrorsPassThroughAndOthersAreNamed() {
        #expect(ErrorSentence.describing(ConfigurationError("app a: topic is empty")) == "app a: topic is empty")
        // Another library's error: named by its type, described by its localized text, not dumped.
        let other = EncodingError.invalidValue(1, .init(codingPath: [], debugDescription: "debug text"))
        #expect(ErrorSentence.describing(other).hasPrefix("EncodingError: "))
    }
}
