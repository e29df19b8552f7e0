import APNSCore
import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldStore

/// `herald devices …`: bulk device management.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Manage the device registry.",
        subcommands: [ImportDevices.self, ExportDevices.self, RestoreDevices.self, StaleDevices.self]
    )
}

/// `herald devices import`: bulk-load a CSV of devices with PostgreSQL COPY.
struct ImportDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import devices from CSV (header token,user_id,locale,topics[,platform[,fcm_kind]]; topics separated by ';').",
        discussion: "platform is ios (the default) or android; fcm_kind is token (the default for android) or fid. "
            + "iOS tokens are normalised to lowercase hex (the <ad853c20 3a9b…> form is accepted); Android tokens are "
            + "kept as given. Bad rows are reported with their line number and skipped; the rest are imported. A "
            + "token registered on the other platform is left as it is and counted."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app the devices belong to.")
    var app: String

    @Option(help: "The CSV file ('-' for standard input).")
    var file: String

    @Option(help: "Rows per COPY batch.")
    var batchSize: Int = 10_000

    func run() async throws {
        let logger = services.makeLogger(label: "herald.devices")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let lines = try LineReader(path: file)
        let app = self.app
        let batchSize = self.batchSize
        let summary = try await withStore(database, logger: logger) { store in
            try await DeviceImporter(store: store, app: app, batchSize: batchSize).run(lines) { progress in
                FileHandle.standardError.write(Data("imported \(progress) rows…\n".utf8))
            }
        }
        for error in summary.errors.prefix(100) {
            FileHandle.standardError.write(Data("rejected \(error)\n".utf8))
        }
        if summary.errors.count > 100 {
            FileHandle.standardError.write(Data("… and \(summary.errors.count - 100) more rejected rows\n".utf8))
        }
        if let error = summary.analysisError {
            FileHandle.standardError.write(
                Data("warning: the devices table was not analysed (autovacuum will analyse it): \(error)\n".utf8))
        }
        if summary.platformConflicts > 0 {
            FileHandle.standardError.write(
                Data(
                    ("\(summary.platformConflicts) rows left out: their tokens are registered on the other platform (or "
                        + "as the other fcm_kind), which an import does not change\n").utf8))
        }
        print(
            "devices import: \(summary.imported) imported, \(summary.errors.count) rejected, "
                + "\(summary.platformConflicts) platform conflicts, app \(app)")
    }
}

/// `herald devices export --app A`: the app's devices as CSV with the import's header, in token order, read in
/// keyset pages so that memory holds one page.
struct ExportDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Export an app's devices as CSV (header token,user_id,locale,topics,platform,fcm_kind), readable by devices "
            + "import."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app whose devices to export.")
    var app: String

    @Option(help: "Write to this file instead of standard output.")
    var output: String?

    @Option(help: "Devices per page read from PostgreSQL.")
    var pageSize: Int = 10_000

    func run() async throws {
        let logger = services.makeLogger(label: "herald.devices")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                throw ValidationError("cannot create \(output)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            handle = FileHandle.standardOutput
        }
        let (app, pageSize) = (self.app, max(1, self.pageSize))
        let count = try await withStore(database, logger: logger) { store in
            handle.write(Data((DeviceCSV.platformHeader.joined(separator: ",") + "\n").utf8))
            var cursor: String? = nil
            var count = 0
            while true {
                let page = try await store.registeredDevicesPage(app: app, after: cursor, limit: pageSize)
                var text = ""
                for device in page {
                    let fields = [
                        device.token.hex, device.userID ?? "", device.locale ?? "",
                        device.topics.joined(separator: ";"), device.platform.rawValue, device.fcmKind?.rawValue ?? "",
                    ]
                    text += fields.map(Self.field).joined(separator: ",") + "\n"
                }
                handle.write(Data(text.utf8))
                count += page.count
                guard page.count == pageSize, let last = page.last else { break }
                cursor = last.token.hex
            }
            return count
        }
        if output != nil { try handle.close() }
        FileHandle.standardError.write(Data("devices export: \(count) devices, app \(app)\n".utf8))
    }

    /// A CSV field as `DeviceCSV` reads it back: quoted when it holds a comma, a quote or edge spaces.
    static func field(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" }) || value.first == " " || value.last == " " else {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
