import Foundation

extension FCMSimulator {
    /// Appends an accepted message to the record file as one JSON line: project, target, message id, time and the
    /// message itself; never the access token.
    func append(_ record: FCMSimulatorRecord) {
        guard recordFile.withLock({ $0 != nil }) else { return }
        let message = (try? JSONParser.parse(Array(record.messageJSON.utf8))) ?? .string(record.messageJSON)
        let line = JSONValue.object([
            "project": .string(record.project),
            "targetField": .string(record.target.field),
            "target": .string(record.target.value),
            "messageID": .string(record.messageID),
            "receivedAt": .number(String(record.receivedAt)),
            "clientEmail": .string(record.clientEmail),
            "message": message,
        ]).serialized
        recordFile.withLock { handle in
            // A small synchronous write on the event loop: acceptable for a test tool, and it keeps lines in order.
            handle?.write(Data((line + "\n").utf8))
        }
    }
}
