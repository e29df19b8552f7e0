/// A growable FIFO that reuses its storage: appends and pops are O(1) without allocating once warm.
struct RingBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    init() {}

    var isEmpty: Bool { count == 0 }

    var first: Element? { isEmpty ? nil : storage[head] }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) & (storage.count - 1)] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head = (head + 1) & (storage.count - 1)
        count -= 1
        return element
    }

    /// The element `offset` places after the first.
    subscript(offset offset: Int) -> Element {
        get {
            precondition(offset >= 0 && offset < count, "RingBuffer offset out of range")
            return storage[(head + offset) & (storage.count - 1)]!
        }
        set {
            precondition(offset >= 0 && offset < count, "RingBuffer offset out of range")
            storage[(head + offset) & (storage.count - 1)] = newValue
        }
    }

    /// Removes everything, keeping the storage.
    mutating func removeAll() {
        while popFirst() != nil {}
        head = 0
    }

    private mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)  // always a power of two, for the masks above
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newStorage[offset] = storage[(head + offset) & (storage.count - 1)].take()
        }
        storage = newStorage
        head = 0
    }
}
