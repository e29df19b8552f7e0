import Foundation
import HeraldCommandLine
import HeraldCore
import Testing

/// The line reader of `herald devices import`: every byte of a line reaches the CSV parser, which then refuses a
/// line holding a NUL byte by its number instead of importing what came before the NUL.
@Suite struct LineReaderTests {
    @Test func aNULByteDoesNotEndItsLineAndTheLineIsRefusedByNumber() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lines-\(UUID()).csv").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = "token,user_id,locale,topics\naabb,victim\u{0}x,en,news\nccdd,,,\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var reader = try LineReader(path: path)
        var lines: [String] = []
        while let line = reader.next() { lines.append(line) }
        #expect(lines == ["token,user_id,locale,topics", "aabb,victim\u{0}x,en,news", "ccdd,,,"])
        #expect {
            _ = try DeviceCSV.parse(lines[1], lineNumber: 2)
        } throws: { error in
            (error as? DeviceCSV.RowError)?.description == "line 2: the line holds a NUL byte (U+0000)"
        }
    }
}
