import Foundation
import RabbitMQ

extension Topology {
    /// The topology as a RabbitMQ definitions file (`rabbitmqctl import_definitions`, or `load_definitions` at
    /// boot) for the vhost `/`: every queue durable, with the arguments `declare(on:)` uses, so operators can
    /// pre-create what the worker would declare. Keys are sorted, so the output is stable.
    public func definitionsJSON(vhost: String = "/") -> String {
        let queues: [[String: Any]] = self.queues.map { queue in
            [
                "name": queue.name, "vhost": vhost, "durable": true, "auto_delete": false,
                "arguments": queue.arguments.mapValues(Self.jsonValue),
            ]
        }
        // One exchange of Herald's own, for events; subscribers bind their queues to it. Work is published through
        // the default exchange.
        let exchanges: [[String: Any]] = [
            [
                "name": events, "vhost": vhost, "type": "topic", "durable": true, "auto_delete": false,
                "internal": false, "arguments": [String: Any](),
            ]
        ]
        let definitions: [String: Any] = ["vhosts": [["name": vhost]], "queues": queues, "exchanges": exchanges]
        // The dictionaries hold only JSON types, so serialisation cannot fail.
        let data = try! JSONSerialization.data(
            withJSONObject: definitions, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func jsonValue(_ value: AMQPFieldValue) -> Any {
        switch value {
        case .string(let text): text
        case .int(let number): number
        case .bool(let flag): flag
        case .double(let number): number
        case .table(let table): table.mapValues(jsonValue)
        case .array(let items): items.map(jsonValue)
        }
    }
}
