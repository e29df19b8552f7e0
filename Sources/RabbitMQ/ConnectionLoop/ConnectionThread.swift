import CRabbitMQ
import Glibc

/// Starts the dedicated thread that owns one rabbitmq-c connection.
///
/// A plain pthread rather than Foundation's `Thread`, so the module does not link Foundation.
enum ConnectionThread {
    private final class Body {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, _ run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Runs `body` on a new detached thread named `name` (Linux keeps 15 bytes of it).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(AMQPError) {
        let context = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                herald_set_thread_name(body.name)
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw AMQPError(.connectionFailed, "pthread_create failed with \(result)")
        }
        pthread_detach(thread)
    }
}
