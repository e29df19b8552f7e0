import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCommandLine
import HeraldCore
import HeraldStore

/// `herald devices expired --app A [--prune] [--output F]`: the app's web subscriptions whose `expirationTime` has
/// passed, as CSV, earliest first; with `--prune`, also removed, each recorded in the dead-token report with reason
/// `SubscriptionExpired`. The push service drops a subscription when it expires, and Herald does not send to it.
struct ExpiredDevices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "expired",
        abstract: "List (and with --prune remove) an app's web subscriptions whose expirationTime has passed.",
        discussion: "A web subscription's expirationTime is what the browser gave when it subscribed (most give "
            + "none: those never expire here). The CSV (header \(header.joined(separator: ","))) lists them earliest "
            + "expiry first; the count goes to standard error. With --prune they are removed in batches, each one "
            + "recorded in dead_tokens with reason SubscriptionExpired (herald report dead-tokens), keys included "
            + "(herald devices restore does not apply: no job pruned them), and the CSV lists those removed. The "
            + "token column is the endpoint: keep the output as safe as the database."
    )

    /// The columns of the listing.
    static let header = ["token", "endpoint_origin", "user_id", "locale", "topics", "expired_at", "registered_at"]

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app whose web subscriptions to look at.")
    var app: String

    @Flag(help: "Remove the expired subscriptions, recording each as a dead token (reason SubscriptionExpired).")
    var prune = false

    @Option(help: "Write the CSV to this file instead of standard output.")
    var output: String?

    @Option(help: "Subscriptions per page read (or per transaction pruned).")
    var pageSize: Int = 10_000

    func validate() throws {
        guard pageSize > 0 else { throw ValidationError("--page-size must be at least 1") }
    }

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
        let (app, pageSize, prune) = (self.app, self.pageSize, self.prune)
        let (count, cutoff) = try await withStore(database, logger: logger) { store in
            let cutoff = try await store.databaseNow()
            handle.write(Data((Self.header.joined(separator: ",") + "\n").utf8))
            var count = 0
            var cursor: ExpiredWebSubscriptionCursor? = nil
            while true {
                let page =
                    prune
                    ? try await store.pruneExpiredWebSubscriptions(app: app, expiredBefore: cutoff, limit: pageSize)
                    : try await store.expiredWebSubscriptions(
                        app: app, expiredBefore: cutoff, after: cursor, limit: pageSize)
                handle.write(Data(page.map(Self.line).joined().utf8))
                count += page.count
                guard page.count == pageSize, let last = page.last else { break }
                cursor = ExpiredWebSubscriptionCursor(expiredAt: last.expiredAt, token: last.token.hex)
            }
            return (count, cutoff)
        }
        if output != nil { try handle.close() }
        FileHandle.standardError.write(
            Data(
                ("devices expired: \(count) web subscriptions expired before \(RFC3339Milliseconds.format(cutoff)), "
                    + "\(prune ? "pruned (dead tokens, reason SubscriptionExpired)" : "listed"), app \(app)\n").utf8))
    }

    /// One subscription as a CSV line.
    static func line(_ expired: ExpiredWebSubscription) -> String {
        let fields = [
            expired.subscription.endpoint.url, expired.subscription.endpoint.origin, expired.userID ?? "",
            expired.locale ?? "", expired.topics.joined(separator: ";"), RFC3339Milliseconds.format(expired.expiredAt),
            RFC3339Milliseconds.format(expired.registeredAt / 1000),
        ]
        return fields.map(ExportDevices.field).joined(separator: ",") + "\n"
    }
}
