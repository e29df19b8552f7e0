import CRabbitMQ

/// Memory for the C structures of outgoing methods (strings, tables), owned by the connection thread.
///
/// Everything allocated here lives until `recycle()`, which the loop calls after each batch of commands;
/// the pages are kept, so steady-state publishing allocates nothing.
final class ScratchPool {
    private var pool = amqp_pool_t()

    init() {
        init_amqp_pool(&pool, 16 * 1024)
    }

    deinit {
        empty_amqp_pool(&pool)
    }

    /// Releases every allocation at once, keeping the pages for reuse.
    func recycle() {
        recycle_amqp_pool(&pool)
    }

    /// Raw memory, 8-byte aligned, valid until `recycle()`.
    func allocate(byteCount: Int) -> UnsafeMutableRawPointer {
        guard let memory = amqp_pool_alloc(&pool, byteCount) else {
            fatalError("rabbitmq-c pool allocation of \(byteCount) bytes failed")
        }
        return memory
    }

    /// A copy of the string's UTF-8 bytes, valid until `recycle()`.
    func bytes(_ string: String) -> amqp_bytes_t {
        var string = string
        return string.withUTF8 { utf8 in
            guard let source = utf8.baseAddress, utf8.count > 0 else { return amqp_bytes_t(len: 0, bytes: nil) }
            let memory = allocate(byteCount: utf8.count)
            memory.copyMemory(from: source, byteCount: utf8.count)
            return amqp_bytes_t(len: utf8.count, bytes: memory)
        }
    }
}

extension String {
    /// Decodes AMQP bytes (short or long strings) as UTF-8, repairing invalid sequences.
    init(amqpBytes bytes: amqp_bytes_t) {
        guard let base = bytes.bytes, bytes.len > 0 else {
            self = ""
            return
        }
        self = String(decoding: UnsafeRawBufferPointer(start: base, count: bytes.len), as: UTF8.self)
    }
}
