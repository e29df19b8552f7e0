import Foundation

/// Reads a pipe on a thread of its own until its end: each chunk to `onData`, then one empty chunk. A blocking read
/// rather than `FileHandle.readabilityHandler`, whose dispatch source can outlive the descriptor it watches (the pipe
/// closes at its end) and crash libdispatch's event loop (seen as a SIGSEGV in `_dispatch_event_loop_drain` while
/// the test process ran many suites at once).
public enum PipeReader {
    public static func start(_ handle: FileHandle, onData: @escaping @Sendable (Data) -> Void) {
        let thread = Thread {
            while true {
                let data = handle.availableData
                onData(data)
                if data.isEmpty { return }
            }
        }
        thread.start()
    }
}
