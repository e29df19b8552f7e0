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
        // Two exchanges of Herald's own: events, which subscribers bind their queues to, and jobs, bound to the jobs
        // queue, which the API publishes through (its broker user may write to nothing else). The workers publish
        // their own work through the default exchange.
        let exchanges: [[String: Any]] = [
            [
                "name": events, "vhost": vhost, "type": "topic", "durable": true, "auto_delete": false,
                "internal": false, "arguments": [String: Any](),
            ],
            [
                "name": jobs, "vhost": vhost, "type": "direct", "durable": true, "auto_delete": false,
                "internal": false, "arguments": [String: Any](),
            ],
        ]
        let bindings: [[String: Any]] = [
            [
                "source": jobs, "vhost": vhost, "destination": jobs, "destination_type": "queue", "routing_key": jobs,
                "arguments": [String: Any](),
            ]
        ]
        // The webhook queues' bounds also as a policy, which reaches queues an earlier Herald declared without them.
        let policies: [[String: Any]] = [
            (webhooks, Self.webhooksMaximumLength), (webhooksParked, Self.webhooksParkedMaximumLength),
        ].map { name, length -> [String: Any] in
            [
                "vhost": vhost, "name": name + ".bounds", "apply-to": "queues", "priority": 0,
                "pattern": "^" + NSRegularExpression.escapedPattern(for: name) + "$",
                "definition": ["max-length": length, "overflow": "drop-head"],
            ]
        }
        let definitions: [String: Any] = [
            "vhosts": [["name": vhost]], "queues": queues, "exchanges": exchanges, "bindings": bindings,
            "policies": policies,
        ]
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
