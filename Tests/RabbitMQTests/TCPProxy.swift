import Foundation
import Glibc
import Synchronization

/// A loopback TCP relay in front of the real broker, so tests can make the network fail: `drop()` resets
/// both sides (a crashed broker or a cut cable), `freeze()` keeps the sockets open but stops relaying (a hung
/// broker or a black-holed route). It relays one connection.
final class TCPProxy: Sendable {
    let port: Int
    /// Yields each heartbeat frame the client sends to the broker.
    let clientHeartbeats: AsyncStream<Void>
    private let heartbeatContinuation: AsyncStream<Void>.Continuation
    private let listener: Int32
    private let state = Mutex<(client: Int32, upstream: Int32, frozen: Bool)>((-1, -1, false))

    init(upstreamHost: String, upstreamPort: Int) throws {
        (clientHeartbeats, heartbeatContinuation) = AsyncStream.makeStream()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                guard bind(listener, socketAddress, length) == 0, listen(listener, 1) == 0,
                    getsockname(listener, socketAddress, &length) == 0
                else { throw POSIXError(.EADDRINUSE) }
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))

        Thread.detachNewThread { [self] in
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = Self.connect(host: upstreamHost, port: upstreamPort)
            guard upstream >= 0 else {
                Glibc.close(client)
                return
            }
            state.withLock { $0 = (client, upstream, false) }
            Thread.detachNewThread { self.relay(from: upstream, to: client, watchHeartbeats: false) }
            self.relay(from: client, to: upstream, watchHeartbeats: true)
        }
    }

    deinit {
        drop()
        Glibc.close(listener)
    }

    /// Resets both connections, as a broker crash would look to the client.
    func drop() {
        let (client, upstream) = state.withLock { ($0.client, $0.upstream) }
        if client >= 0 { shutdown(client, Int32(SHUT_RDWR)) }
        if upstream >= 0 { shutdown(upstream, Int32(SHUT_RDWR)) }
    }

    /// Stops relaying in both directions while keeping the sockets open.
    func freeze() {
        state.withLock { $0.frozen = true }
    }

    private static let heartbeatFrame: [UInt8] = [8, 0, 0, 0, 0, 0, 0, 0xCE]

    private func relay(from source: Int32, to destination: Int32, watchHeartbeats: Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if state.withLock({ $0.frozen }) { continue }
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
        if watchHeartbeats { heartbeatContinuation.finish() }
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
        return result == 0 ? descriptor : -1
    }
}
