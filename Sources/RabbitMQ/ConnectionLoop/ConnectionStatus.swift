import Synchronization

/// What the connection thread reports about the connection, readable from any thread (health checks, metrics).
final class ConnectionStatus: Sendable {
    private struct Snapshot {
        var state = AMQPConnection.State.connected
        var isBlocked = false
        var reconnects = 0
    }

    private let snapshot = Mutex(Snapshot())

    var state: AMQPConnection.State { snapshot.withLock { $0.state } }
    var isBlocked: Bool { snapshot.withLock { $0.isBlocked } }
    var reconnects: Int { snapshot.withLock { $0.reconnects } }

    func update(_ state: AMQPConnection.State) {
        snapshot.withLock { snapshot in
            if snapshot.state == .reconnecting && state == .connected { snapshot.reconnects += 1 }
            if state != .connected { snapshot.isBlocked = false }
            snapshot.state = state
        }
    }

    func update(blocked: Bool) {
        snapshot.withLock { $0.isBlocked = blocked }
    }
}
