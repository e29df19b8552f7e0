/// Publishes sent on the confirm-mode channel and not yet confirmed, indexed by delivery tag.
///
/// Tags are assigned by counting publishes from 1 after confirm.select, so the window is a ring whose
/// first slot holds `firstTag`; acks and nacks (single or `multiple`) resolve slots, and resolved slots
/// are trimmed from the front.
struct ConfirmWindow {
    /// What identifies a returned mandatory message: basic.return carries no delivery tag.
    struct ReturnKey {
        let exchange: String
        let routingKey: String
        let body: [UInt8]
    }

    private struct Slot {
        var completion: PublishCompletion?
        var returned: AMQPError?
        let returnKey: ReturnKey?
    }

    private var slots = RingBuffer<Slot>()
    private var firstTag: UInt64 = 1
    private var mandatoryTags = RingBuffer<UInt64>()
    /// Sent and not yet resolved.
    private(set) var outstanding = 0

    /// Starts counting tags from 1 again, for a freshly opened channel. The window must be empty.
    mutating func reset() {
        precondition(outstanding == 0, "ConfirmWindow reset with publishes outstanding")
        slots.removeAll()
        mandatoryTags.removeAll()
        firstTag = 1
    }

    /// Records a publish that was just written to the socket; returns its delivery tag.
    @discardableResult
    mutating func append(
        _ completion: PublishCompletion,
        returnKey: ReturnKey?
    ) -> UInt64 {
        let tag = firstTag + UInt64(slots.count)
        slots.append(Slot(completion: completion, returned: nil, returnKey: returnKey))
        if returnKey != nil { mandatoryTags.append(tag) }
        outstanding += 1
        return tag
    }

    /// Applies basic.ack (`nack == nil`) or basic.nack; returns false when the tag is unknown.
    mutating func confirm(tag: UInt64, multiple: Bool, nack: AMQPError?) -> Bool {
        guard tag >= firstTag, tag < firstTag + UInt64(slots.count) else { return false }
        let last = Int(tag - firstTag)
        for offset in (multiple ? 0 : last)...last {
            resolve(offset: offset) { slot in
                if let nack { return .failure(nack) }
                return slot.returned.map { .failure($0) } ?? .success(())
            }
        }
        trim()
        return true
    }

    /// Marks the oldest unresolved mandatory publish that matches a basic.return; its ack will then fail
    /// with `error`. The broker sends the return before the ack for the same message.
    mutating func markReturned(exchange: String, routingKey: String, body: [UInt8], error: AMQPError) -> Bool {
        while let tag = mandatoryTags.first, tag < firstTag || !isPending(tag) { _ = mandatoryTags.popFirst() }
        for index in 0..<mandatoryTags.count {
            let tag = mandatoryTags[offset: index]
            guard tag >= firstTag, isPending(tag) else { continue }
            let offset = Int(tag - firstTag)
            var slot = slots[offset: offset]
            guard slot.returned == nil, let key = slot.returnKey, key.exchange == exchange,
                key.routingKey == routingKey, key.body == body
            else { continue }
            slot.returned = error
            slots[offset: offset] = slot
            return true
        }
        return false
    }

    /// Fails every outstanding publish, for example when the channel or connection closes.
    mutating func failAll(_ error: AMQPError) {
        for offset in 0..<slots.count {
            resolve(offset: offset) { _ in .failure(error) }
        }
        trim()
    }

    private func isPending(_ tag: UInt64) -> Bool {
        slots[offset: Int(tag - firstTag)].completion != nil
    }

    private mutating func resolve(offset: Int, _ outcome: (Slot) -> Result<Void, AMQPError>) {
        var slot = slots[offset: offset]
        guard let completion = slot.completion else { return }
        let result = outcome(slot)
        slot.completion = nil
        slots[offset: offset] = slot
        outstanding -= 1
        completion.resume(returning: result)
    }

    private mutating func trim() {
        while let first = slots.first, first.completion == nil {
            _ = slots.popFirst()
            firstTag += 1
        }
    }
}
