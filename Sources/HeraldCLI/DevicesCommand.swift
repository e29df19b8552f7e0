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
        subcommands: [
            ImportDevices.self, ExportDevices.self, RestoreDevices.self, StaleDevices.self, ExpiredDevices.self,
        ]
    )
}

/// `herald devices import`: bulk-load a CSV of devices with PostgreSQL COPY.
struct ImportDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import devices from CSV (header token,user_id,locale,topics[,platform[,fcm_kind[,p256dh,auth,"
            + "expiration_time]]]; topics separated by ';') or web subscriptions from JSON Lines.",
        discussion: "platform is ios (the default), android or web; fcm_kind is token (the default for android) or "
            + "fid. A web row's token is its subscription's endpoint, with its keys in p256dh and auth and its "
            + "expirationTime (ms, or empty) in expiration_time. iOS tokens are normalised to lowercase hex (the "
            + "<ad853c20 3a9b…> form is accepted); Android tokens and endpoints are kept as given. With --format jsonl "
            + "(or a file ending in .jsonl), each line is {\"user_id\", \"locale\", \"topics\", \"subscription\"} with "
            + "the subscription as PushSubscription.toJSON() gives it. Bad rows are reported with their line number "
            + "and skipped; the rest are imported. A token registered on another platform is left as it is and "
            + "counted."
    )

    /// The input's form.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case csv, jsonl
    }

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app the devices belong to.")
    var app: String

    @Option(help: "The CSV file ('-' for standard input).")
    var file: String

    @Option(help: "Rows per COPY batch.")
    var batchSize: Int = 10_000

    @Option(help: "csv or jsonl (default: jsonl for a file ending in .jsonl, else csv).")
    var format: Format?

    func run() async throws {
        let logger = services.makeLogger(label: "herald.devices")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let lines = try LineReader(path: file)
        let app = self.app
        let batchSize = self.batchSize
        let format = self.format ?? (file.lowercased().hasSuffix(".jsonl") ? .jsonl : .csv)
        let summary = try await withStore(database, logger: logger) { store in
            let importer = DeviceImporter(store: store, app: app, batchSize: batchSize)
            let progress: (Int) -> Void = { progress in
                FileHandle.standardError.write(Data("imported \(progress) rows…\n".utf8))
            }
            return format == .jsonl
                ? try await importer.runJSONLines(lines, progress: progress)
                : try await importer.run(lines, progress: progress)
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
            "Export an app's devices as CSV (header token,user_id,locale,topics,platform,fcm_kind,p256dh,auth,"
            + "expiration_time), readable by devices import.",
        discussion: "A web subscription's row holds its endpoint (the token) and its keys: keep the file as safe as "
            + "the database."
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
            handle.write(Data((DeviceCSV.webHeader.joined(separator: ",") + "\n").utf8))
            var cursor: String? = nil
            var count = 0
            while true {
                let page = try await store.registeredDevicesPage(app: app, after: cursor, limit: pageSize)
                var text = ""
                for device in page {
                    let fields: [String] = [
                        device.token.hex, device.userID ?? "", device.locale ?? "",
                        device.topics.joined(separator: ";"), device.platform.rawValue, device.fcmKind?.rawValue ?? "",
                    ]
                    text += (fields + Self.webFields(device)).map(Self.field).joined(separator: ",") + "\n"
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

    /// A web subscription's `p256dh`, `auth` and `expiration_time` columns (empty for the other platforms).
    static func webFields(_ device: RegisteredDevice) -> [String] {
        guard let subscription = device.webSubscription else { return ["", "", ""] }
        let keys = subscription.keys.stored.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return [keys.first ?? "", keys.last ?? "", subscription.expirationTime.map(String.init) ?? ""]
    }

    /// A CSV field as `DeviceCSV` reads it back: quoted when it holds a comma, a quote or edge spaces.
    static func field(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" }) || value.first == " " || value.last == " " else {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
