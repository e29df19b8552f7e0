import ArgumentParser
import HeraldBench
import HeraldDemo

/// The `herald` executable (`main.swift` starts it). `herald bench` and `herald demo` come from their own modules,
/// HeraldBench and HeraldDemo, so that the production modules carry none of their code.
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Push-notification delivery pipeline for Apple devices: RabbitMQ in, PostgreSQL beside, APNs out.",
        version: HeraldVersion.description,
        subcommands: [
            WorkerCommand.self, MigrateCommand.self, DevicesCommand.self, SimulatorCommand.self,
            FCMSimulatorCommand.self, WebPushSimulatorCommand.self, DemoCommand.self,
            ApiCommand.self, PublishCommand.self, ReportCommand.self, KeysCommand.self, JobsCommand.self,
            TopologyCommand.self, BenchCommand.self, ChannelsCommand.self, DoctorCommand.self,
            ConfigCommand.self,
            ParkedCommand.self, WebPushCommand.self,
        ]
    )
}
