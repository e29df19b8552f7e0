import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCommandLine
import HeraldCore
import HeraldStore

/// `herald devices stale --app A --older-than 30d [--prune] [--output F]`: the app's Android devices that have not
/// registered again for longer than the threshold, as CSV, oldest first; with `--prune`, also removed, each recorded
/// in the dead-token report with reason `Stale`. FCM expires a token not refreshed for 270 days (sends to it answer
/// UNREGISTERED), and calls one a month old stale.
struct StaleDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stale",
        abstract: "List (and with --prune remove) an app's Android devices not registered again for a while.",
        discussion: "A device's registration time is its last registration (a re-registration or re-import "
            + "refreshes it). FCM expires Android tokens not refreshed for 270 days, the longest --older-than "
            + "accepted. The CSV (header \(header.joined(separator: ","))) lists the devices oldest first; the count "
            + "goes to standard error. With --prune they are removed in batches, each one recorded in dead_tokens "
            + "with reason Stale (herald report dead-tokens), and the CSV lists the devices removed. iOS devices are "
            + "never listed: APNs tokens have no such rule."
    )

    /// The columns of the listing.
    static let header = ["token", "fcm_kind", "user_id", "locale", "topics", "registered_at"]

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app whose Android devices to look at.")
    var app: String

    @Option(help: "The staleness threshold: a whole number and a unit s, m, h or d, such as 30d; at most 270d.")
    var olderThan: String

    @Flag(help: "Remove the stale devices, recording each as a dead token (reason Stale).")
    var prune = false

    @Option(help: "Write the CSV to this file instead of standard output.")
    var output: String?

    @Option(help: "Devices per page read (or per transaction pruned).")
    var pageSize: Int = 10_000

    func validate() throws {
        _ = try Self.threshold(olderThan)
        guard pageSize > 0 else { throw ValidationError("--page-size must be at least 1") }
    }

    /// The threshold of `--older-than`: above zero, at most 270 days.
    static func threshold(_ text: String) throws -> Duration {
        guard let duration = ConfigurationValue.parsePeriod(text) else {
            throw ValidationError("--older-than must be a whole number and a unit s, m, h or d, such as 30d")
        }
        guard duration <= Store.longestStaleness else {
            throw ValidationError(
                "--older-than is at most 270d: FCM expires Android tokens not refreshed for 270 days, and sends to "
                    + "them fail")
        }
        return duration
    }

    func run() async throws {
        let logger = services.makeLogger(label: "herald.devices")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let threshold = try Self.threshold(olderThan)
        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                throw ValidationError("cannot create \(output)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            handle = FileHandle.standardOutput
        }
        let (app, pageSize, prune) = (self.app, self.pageSize, self.prune)
        let (count, cutoff) = try await withStore(database, logger: logger) { store in
            let cutoff = try await store.staleCutoff(olderThan: threshold)
            handle.write(Data((Self.header.joined(separator: ",") + "\n").utf8))
            var count = 0
            var cursor: StaleDeviceCursor? = nil
            while true {
                let page =
                    prune
                    ? try await store.pruneStaleDevices(app: app, registeredBefore: cutoff, limit: pageSize)
                    : try await store.staleDevicesPage(
                        app: app, registeredBefore: cutoff, after: cursor, limit: pageSize)
                handle.write(Data(page.map(Self.line).joined().utf8))
                count += page.count
                guard page.count == pageSize, let last = page.last else { break }
                cursor = StaleDeviceCursor(registeredAt: last.registeredAt, token: last.token.hex)
            }
            return (count, cutoff)
        }
        if output != nil { try handle.close() }
        let before = RFC3339Milliseconds.format(cutoff / 1000)
        FileHandle.standardError.write(
            Data(
                ("devices stale: \(count) Android devices registered before \(before) (older than \(olderThan)), "
                    + "\(prune ? "pruned (dead tokens, reason Stale)" : "listed"), app \(app)\n").utf8))
    }

    /// One device as a CSV line.
    static func line(_ device: StaleDevice) -> String {
        let fields = [
            device.token.hex, device.fcmKind.rawValue, device.userID ?? "", device.locale ?? "",
            device.topics.joined(separator: ";"), RFC3339Milliseconds.format(device.registeredAt / 1000),
        ]
        return fields.map(ExportDevices.field).joined(separator: ",") + "\n"
    }
}
