import ArgumentParser
import Foundation

/// Reads a file line by line without loading it whole.
package struct LineReader: @unchecked Sendable {
    private let handle: UnsafeMutablePointer<FILE>

    /// Opens `path` (`-`: standard input), or fails naming it.
    package init(path: String) throws {
        if path == "-" {
            handle = fdopen(0, "r")
        } else {
            guard let file = fopen(path, "r") else { throw ValidationError("cannot open \(path)") }
            handle = file
        }
    }

    /// The next line without its line break; nil at the end.
    package mutating func next() -> String? {
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        defer { free(buffer) }
        let count = getline(&buffer, &capacity, handle)
        guard count >= 0, let buffer else { return nil }
        // All `count` bytes: a NUL byte inside the line must not end it (`DeviceCSV` refuses such a line by number).
        var line = buffer.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
        while let last = line.last, last.isNewline { line.removeLast() }
        return line
    }

    /// A line read with a bound: its text, or how many bytes it had when it was longer than the bound (its bytes
    /// past the bound are read and dropped, never held).
    package enum BoundedLine: Sendable, Hashable {
        case line(String)
        case tooLong(bytes: Int)
    }

    /// The next line without its line break, holding at most `maximumBytes` of it; nil at the end.
    package mutating func next(maximumBytes: Int) -> BoundedLine? {
        var bytes: [UInt8] = []
        var count = 0
        var sawAny = false
        while true {
            let c = getc(handle)
            if c == EOF { break }
            sawAny = true
            if c == 0x0A { break }
            count += 1
            if count <= maximumBytes + 1 { bytes.append(UInt8(truncatingIfNeeded: c)) }
        }
        guard sawAny else { return nil }
        if bytes.last == 0x0D {
            bytes.removeLast()
            count -= 1
        }
        guard count <= maximumBytes else { return .tooLong(bytes: count) }
        return .line(String(decoding: bytes, as: UTF8.self))
    }
}
