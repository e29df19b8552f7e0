import Foundation

/// Where a byte of a JSON text is, as an editor shows it, for errors that name the line and column of a file.
public enum JSONTextPosition {
    /// The 1-based line and column (in characters, not bytes) of byte `offset` of `data`.
    public static func lineAndColumn(ofByte offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1
        var lineStart = data.startIndex
        let end = data.index(data.startIndex, offsetBy: min(max(offset, 0), data.count))
        for index in data.startIndex..<end where data[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        // Count characters, not bytes: continuation bytes (10xxxxxx) do not start one.
        let column = data[lineStart..<end].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return (line, column)
    }
}
