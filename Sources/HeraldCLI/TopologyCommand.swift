import ArgumentParser
import HeraldCommandLine
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

    @OptionGroup var queues: QueueOptions

    @Option(help: "The same as --queue-prefix (kept for scripts that use it).")
    var prefix: String?

    func run() throws {
        var resolver = ServiceOptions.resolver(with: [queues])
        if let prefix, resolver.flags[.queuePrefix] == nil { resolver.flags[.queuePrefix] = prefix }
        print(Topology(try resolver.resolve(QueueOptions.keys)).definitionsJSON(), terminator: "")
    }
}
