import Foundation

extension WebPushSimulator {
    /// Appends an accepted message to the record file as one JSON line: subscription id, plaintext as UTF-8 text
    /// (null when it did not decrypt, was skipped or is not UTF-8), ttl, urgency, topic, message id and time; never
    /// the JWT nor any key.
    func append(_ record: WebPushSimulatorRecord) {
        guard recordFile.withLock({ $0 != nil }) else { return }
        let object: [String: Any] = [
            "id": record.subscriptionID,
            "plaintext": record.text ?? NSNull(),
            "decrypted": record.plaintext != nil,
            "ttl": record.ttl,
            "urgency": record.urgency ?? NSNull(),
            "topic": record.topic ?? NSNull(),
            "messageID": record.messageID,
            "receivedAt": record.receivedAt,
        ]
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        recordFile.withLock { handle in
            // A small synchronous write on the event loop: acceptable for a test tool, and it keeps lines in order.
            handle?.write(data + Data("\n".utf8))
        }
    }
}
