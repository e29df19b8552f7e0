import ArgumentParser
import HeraldMessaging

/// `herald topology …`: the queues Herald declares, for operators.
struct TopologyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topology",
        abstract: "Show Herald's RabbitMQ topology.",
        subcommands: [TopologyExportCommand.self]
    )
}

/// `herald topology export`: print the topology as a RabbitMQ definitions file (`rabbitmqctl import_definitions`).
struct TopologyExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the queues (with their arguments, vhost /) as a RabbitMQ definitions JSON file."
    )

    @Option(help: "Queue name prefix.")
    var prefix: String = Topology.defaultPrefix

    @Option(help: "Queue type of the queues: classic or quorum.")
    var queueType: String = "classic"

    func run() throws {
        guard let type = Topology.QueueType(rawValue: queueType) else {
            throw ValidationError("--queue-type must be classic or quorum")
        }
        print(Topology(prefix: prefix, queueType: type).definitionsJSON(), terminator: "")
    }
}
