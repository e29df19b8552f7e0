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
        // No exchanges or bindings: Herald publishes through the default exchange only.
        let definitions: [String: Any] = ["vhosts": [["name": vhost]], "queues": queues]
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
