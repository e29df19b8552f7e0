import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCommandLine
import HeraldStore

/// `herald report dead-tokens` and `herald report jobs`.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Reports: pruned device tokens, and jobs with their counters.",
        subcommands: [DeadTokensReport.self, JobsReport.self]
    )
}

/// Output formats of the reports.
enum ReportFormat: String, ExpressibleByArgument, CaseIterable {
    case table, csv, json
}

/// Parses `--since`/`--until` values.
func reportTime(_ text: String, flag: String) throws -> Int64 {
    guard let value = TimeWindow.milliseconds(text) else {
        throw ValidationError("\(flag) must be RFC 3339 or a duration such as 7d, 24h, 30m")
    }
    return value
}

/// `herald report dead-tokens --app A --since 7d [--format table|csv|json]`.
struct DeadTokensReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-tokens",
        abstract: "Pruned tokens of an app with reason, APNs timestamp, time and job, and totals by reason and day."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app.")
    var app: String

    @Option(help: "Start: RFC 3339 or a duration before now (7d, 24h, 30m).")
    var since: String = "7d"

    @Option(help: "End (default now).")
    var until: String?

    @Option(help: "table, csv or json.")
    var format: ReportFormat = .table

    @Option(help: "Rows to list at most (totals cover the whole window).")
    var limit: Int = 100_000

    func run() async throws {
        let logger = services.makeLogger(label: "herald.report")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let from = try reportTime(since, flag: "--since")
        let to = try until.map { try reportTime($0, flag: "--until") }
        let (app, limit) = (self.app, self.limit)
        let report = try await withStore(database, logger: logger) { store in
            try await store.deadTokenReport(app: app, since: from, until: to, limit: limit)
        }
        switch format {
        case .csv:
            print(ReportRendering.deadTokensCSV(report), terminator: "")
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            let body = ReportRendering.DeadTokens(app: app, since: from, until: to, report: report)
            print(String(decoding: try encoder.encode(body), as: UTF8.self))
        case .table:
            let rows = report.records.map { record in
                [
                    RFC3339Milliseconds.format(record.recordedAt), record.reason, record.platform.rawValue,
                    record.token.hex, record.jobID ?? "", record.apnsTimestamp.map(RFC3339Milliseconds.format) ?? "",
                ]
            }
            print(
                ReportRendering.table(["recorded_at", "reason", "platform", "token", "job", "apns_timestamp"], rows),
                terminator: "")
            print("")
            print(
                ReportRendering.table(
                    ["reason", "count"], report.byReason.sorted { $0.key < $1.key }.map { [$0.key, String($0.value)] }),
                terminator: "")
            print("")
            print(
                ReportRendering.table(["day", "count"], report.byDay.map { [$0.day, String($0.count)] }), terminator: ""
            )
            print(
                "\ntotal \(report.total) pruned tokens for \(app)\(report.truncated ? " (\(report.records.count) listed)" : "")"
            )
        }
    }
}

/// `herald report jobs [--since 24h] [--app A] [--format table|csv|json]`.
struct JobsReport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "Jobs created in a window, newest first, with their state and counters."
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "Only this app's jobs.")
    var app: String?

    @Option(help: "Start: RFC 3339 or a duration before now (7d, 24h, 30m).")
    var since: String = "24h"

    @Option(help: "table, csv or json.")
    var format: ReportFormat = .table

    @Option(help: "Jobs to list at most.")
    var limit: Int = 1000

    struct Row: Encodable {
        var id, app, state, targetKind: String
        var targeted, sent, pruned, failed, expired, retried: Int
        var error: String?
        var createdAt: String
        var finishedAt: String?

        enum CodingKeys: String, CodingKey {
            case id, app, state, targeted, sent, pruned, failed, expired, retried, error
            case targetKind = "target_kind"
            case createdAt = "created_at"
            case finishedAt = "finished_at"
        }

        var cells: [String] {
            [
                id, app, state, targetKind, String(targeted), String(sent), String(pruned), String(failed),
                String(expired), String(retried), createdAt, finishedAt ?? "", error ?? "",
            ]
        }
    }

    static let header = [
        "id", "app", "state", "target_kind", "targeted", "sent", "pruned", "failed", "expired", "retried",
        "created_at", "finished_at", "error",
    ]

    func run() async throws {
        let logger = services.makeLogger(label: "herald.report")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let from = try reportTime(since, flag: "--since")
        let (app, limit) = (self.app, self.limit)
        let jobs = try await withStore(database, logger: logger) { store in
            try await store.jobSummaries(app: app, since: from, limit: limit)
        }
        let rows = jobs.map { job in
            let s = job.status
            return Row(
                id: s.id, app: s.app, state: s.state.rawValue, targetKind: s.targetKind, targeted: s.counters.targeted,
                sent: s.counters.sent, pruned: s.counters.pruned, failed: s.counters.failed,
                expired: s.counters.expired,
                retried: s.counters.retried, error: s.error, createdAt: RFC3339Milliseconds.format(job.createdAt),
                finishedAt: job.finishedAt.map(RFC3339Milliseconds.format)
            )
        }
        switch format {
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(rows), as: UTF8.self))
        case .csv:
            print(Self.header.joined(separator: ","))
            for row in rows { print(row.cells.map(ReportRendering.csvField).joined(separator: ",")) }
        case .table:
            print(ReportRendering.table(Self.header, rows.map(\.cells)), terminator: "")
            var byState: [String: Int] = [:]
            for row in rows { byState[row.state, default: 0] += 1 }
            print(
                "\n\(rows.count) jobs: "
                    + byState.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
        }
    }
}
