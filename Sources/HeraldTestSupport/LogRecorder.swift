import Foundation
import Logging
import Synchronization

/// Log events captured in memory, for asserting what a component logged (and what it never logs: tokens, keys).
public final class LogRecorder: Sendable {
    /// One captured event: its level, message and metadata (the logger's and the event's, as text).
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])
    /// Set `HERALD_TEST_PRINT_LOGS=1` to see the captured logs while debugging a test.
    public static let printing = ProcessInfo.processInfo.environment["HERALD_TEST_PRINT_LOGS"] != nil

    public init() {}

    /// Every entry so far, oldest first.
    public var recorded: [Entry] { entries.withLock { $0 } }

    /// Every message so far, oldest first.
    public var all: [String] { recorded.map(\.message) }

    public func count(of message: String) -> Int { all.filter { $0 == message }.count }

    /// The entries whose message is `message`.
    public func entries(_ message: String) -> [Entry] { recorded.filter { $0.message == message } }

    /// A handler that records into this recorder, at `level` and above.
    public func handler(level: Logger.Level = .trace) -> some LogHandler { Handler(recorder: self, logLevel: level) }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level

        init(recorder: LogRecorder, logLevel: Logger.Level) {
            self.recorder = recorder
            self.logLevel = logLevel
        }

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var all = metadata
            all.merge(event.metadata ?? [:]) { $1 }
            if LogRecorder.printing { print("\(event.level) \(event.message) \(all)") }
            let entry = Entry(
                level: event.level, message: event.message.description,
                metadata: all.mapValues { "\($0)" })
            recorder.entries.withLock { $0.append(entry) }
        }
    }
}
