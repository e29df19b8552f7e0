import Foundation
import Glibc
import Synchronization

/// A loopback TCP relay in front of the real broker, so tests can make the network fail: `drop()` resets
/// both sides of the current connection (a crashed broker or a cut cable), `freeze()` keeps its sockets open but
/// stops relaying (a hung broker or a black-holed route), `refuse(_:)` turns new connections away (a broker that
/// is down). Each new client connection is relayed afresh, so a client can reconnect through it.
final class TCPProxy: Sendable {
    let port: Int
    /// Yields each heartbeat frame the client sends to the broker.
    let clientHeartbeats: AsyncStream<Void>
    /// Yields the number of client connections relayed so far, each time one is accepted.
    let connections: AsyncStream<Int>
    private let heartbeatContinuation: AsyncStream<Void>.Continuation
    private let connectionsContinuation: AsyncStream<Int>.Continuation
    private let listener: Int32

    private struct State {
        var client: Int32 = -1
        var upstream: Int32 = -1
        /// The number of the current connection, and whether it is frozen.
        var current = 0
        var frozen = false
        var refusing = false
    }

    private let state = Mutex(State())

    init(upstreamHost: String, upstreamPort: Int) throws {
        (clientHeartbeats, heartbeatContinuation) = AsyncStream.makeStream()
        (connections, connectionsContinuation) = AsyncStream.makeStream()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                guard bind(listener, socketAddress, length) == 0, listen(listener, 8) == 0,
                    getsockname(listener, socketAddress, &length) == 0
                else { throw POSIXError(.EADDRINUSE) }
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))

        // Weak: the proxy's deinit shuts the listener down, which ends this loop.
        Thread.detachNewThread { [weak self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                guard let self else {
                    Glibc.close(client)
                    return
                }
                self.relay(client: client, upstreamHost: upstreamHost, upstreamPort: upstreamPort)
            }
        }
    }

    private func relay(client: Int32, upstreamHost: String, upstreamPort: Int) {
        let upstream = state.withLock { $0.refusing } ? -1 : Self.connect(host: upstreamHost, port: upstreamPort)
        guard upstream >= 0 else {
            Glibc.close(client)
            return
        }
        let number = state.withLock { state in
            state.current += 1
            state.frozen = false
            (state.client, state.upstream) = (client, upstream)
            return state.current
        }
        connectionsContinuation.yield(number)
        Thread.detachNewThread { self.relay(from: upstream, to: client, number: number, watchHeartbeats: false) }
        Thread.detachNewThread { self.relay(from: client, to: upstream, number: number, watchHeartbeats: true) }
    }

    deinit {
        drop()
        shutdown(listener, Int32(SHUT_RDWR))  // wakes the accepting thread
        Glibc.close(listener)
        heartbeatContinuation.finish()
        connectionsContinuation.finish()
    }

    /// Resets the current connection's two sockets, as a broker crash would look to the client.
    func drop() {
        let (client, upstream) = state.withLock { ($0.client, $0.upstream) }
        if client >= 0 { shutdown(client, Int32(SHUT_RDWR)) }
        if upstream >= 0 { shutdown(upstream, Int32(SHUT_RDWR)) }
    }

    /// Stops relaying on the current connection in both directions while keeping its sockets open.
    func freeze() {
        state.withLock { $0.frozen = true }
    }

    /// Closes new client connections at once (while `refusing`), as a broker that is down would.
    func refuse(_ refusing: Bool) {
        state.withLock { $0.refusing = refusing }
    }

    /// Writes `bytes` to the client as if the broker had sent them; only while the connection is idle, so that
    /// they cannot land inside a frame being relayed.
    func injectToClient(_ bytes: [UInt8]) {
        let client = state.withLock { $0.client }
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static let heartbeatFrame: [UInt8] = [8, 0, 0, 0, 0, 0, 0, 0xCE]

    private func relay(from source: Int32, to destination: Int32, number: Int, watchHeartbeats: Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if state.withLock({ $0.frozen && $0.current == number }) { continue }
            if watchHeartbeats, count >= 8 {
                // An idle client sends a heartbeat as a frame of its own.
                for start in 0...(count - 8) where buffer[start..<start + 8].elementsEqual(Self.heartbeatFrame) {
                    heartbeatContinuation.yield()
                }
            }
            let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
            guard written == count else { break }
        }
        shutdown(destination, Int32(SHUT_RDWR))
        // Both relays of a connection end here; the one reading from the client closes both sockets.
        if watchHeartbeats {
            shutdown(source, Int32(SHUT_RDWR))
        }
    }

    private static func connect(host: String, port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result != 0 {
            Glibc.close(descriptor)
            return -1
        }
        return descriptor
    }
}
