import CRabbitMQ

extension AMQPFieldValue {
    /// Converts a decoded rabbitmq-c value; `nil` for `void`, which has no Swift counterpart.
    init?(_ value: amqp_field_value_t) {
        switch amqp_field_value_kind_t(UInt32(value.kind)) {
        case AMQP_FIELD_KIND_BOOLEAN: self = .bool(value.value.boolean != 0)
        case AMQP_FIELD_KIND_I8: self = .int(Int64(value.value.i8))
        case AMQP_FIELD_KIND_U8: self = .int(Int64(value.value.u8))
        case AMQP_FIELD_KIND_I16: self = .int(Int64(value.value.i16))
        case AMQP_FIELD_KIND_U16: self = .int(Int64(value.value.u16))
        case AMQP_FIELD_KIND_I32: self = .int(Int64(value.value.i32))
        case AMQP_FIELD_KIND_U32: self = .int(Int64(value.value.u32))
        case AMQP_FIELD_KIND_I64: self = .int(value.value.i64)
        case AMQP_FIELD_KIND_U64, AMQP_FIELD_KIND_TIMESTAMP: self = .int(Int64(truncatingIfNeeded: value.value.u64))
        case AMQP_FIELD_KIND_F32: self = .double(Double(value.value.f32))
        case AMQP_FIELD_KIND_F64: self = .double(value.value.f64)
        case AMQP_FIELD_KIND_DECIMAL:
            var scaled = Double(value.value.decimal.value)
            for _ in 0..<value.value.decimal.decimals { scaled /= 10 }
            self = .double(scaled)
        case AMQP_FIELD_KIND_UTF8, AMQP_FIELD_KIND_BYTES: self = .string(String(amqpBytes: value.value.bytes))
        case AMQP_FIELD_KIND_TABLE: self = .table(AMQPTable(value.value.table))
        case AMQP_FIELD_KIND_ARRAY:
            let array = value.value.array
            var elements: [AMQPFieldValue] = []
            elements.reserveCapacity(Int(array.num_entries))
            for index in 0..<Int(array.num_entries) {
                if let element = AMQPFieldValue(array.entries[index]) { elements.append(element) }
            }
            self = .array(elements)
        default: return nil
        }
    }

    /// Encodes into memory from `pool`, valid until the pool is recycled.
    func encoded(in pool: ScratchPool) -> amqp_field_value_t {
        var field = amqp_field_value_t()
        switch self {
        case .string(let string):
            field.kind = UInt8(AMQP_FIELD_KIND_UTF8.rawValue)
            field.value.bytes = pool.bytes(string)
        case .int(let int):
            field.kind = UInt8(AMQP_FIELD_KIND_I64.rawValue)
            field.value.i64 = int
        case .bool(let bool):
            field.kind = UInt8(AMQP_FIELD_KIND_BOOLEAN.rawValue)
            field.value.boolean = bool ? 1 : 0
        case .double(let double):
            field.kind = UInt8(AMQP_FIELD_KIND_F64.rawValue)
            field.value.f64 = double
        case .table(let table):
            field.kind = UInt8(AMQP_FIELD_KIND_TABLE.rawValue)
            field.value.table = table.encoded(in: pool)
        case .array(let array):
            field.kind = UInt8(AMQP_FIELD_KIND_ARRAY.rawValue)
            let memory = pool.allocate(byteCount: max(1, array.count) * MemoryLayout<amqp_field_value_t>.stride)
            let entries = memory.bindMemory(to: amqp_field_value_t.self, capacity: array.count)
            for (index, element) in array.enumerated() {
                (entries + index).initialize(to: element.encoded(in: pool))
            }
            field.value.array = amqp_array_t(num_entries: Int32(array.count), entries: entries)
        }
        return field
    }
}

extension AMQPTable {
    /// Converts a decoded rabbitmq-c table, dropping `void` entries.
    init(_ table: amqp_table_t) {
        self.init(minimumCapacity: Int(table.num_entries))
        for index in 0..<Int(table.num_entries) {
            let entry = table.entries[index]
            if let value = AMQPFieldValue(entry.value) { self[String(amqpBytes: entry.key)] = value }
        }
    }

    /// Encodes into memory from `pool`, valid until the pool is recycled.
    func encoded(in pool: ScratchPool) -> amqp_table_t {
        guard !isEmpty else { return amqp_table_t(num_entries: 0, entries: nil) }
        let memory = pool.allocate(byteCount: count * MemoryLayout<amqp_table_entry_t>.stride)
        let entries = memory.bindMemory(to: amqp_table_entry_t.self, capacity: count)
        for (index, (key, value)) in enumerated() {
            (entries + index).initialize(to: amqp_table_entry_t(key: pool.bytes(key), value: value.encoded(in: pool)))
        }
        return amqp_table_t(num_entries: Int32(count), entries: entries)
    }
}
