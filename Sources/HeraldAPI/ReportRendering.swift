import Foundation
import HeraldStore

/// The dead-token and jobs reports as JSON, CSV and text tables: one rendering for the API and the CLI.
public enum ReportRendering {
    /// The JSON form of a dead-token report.
    public struct DeadTokens: Encodable {
        public struct Row: Encodable {
            var token: String
            var reason: String
            var apnsTimestamp: String?
            var jobID: String?
            var recordedAt: String
            var platform: String
            var fcmKind: String?
            var endpointOrigin: String?

            enum CodingKeys: String, CodingKey {
                case token, reason, platform
                case apnsTimestamp = "apns_timestamp"
                case jobID = "job_id"
                case recordedAt = "recorded_at"
                case fcmKind = "fcm_kind"
                case endpointOrigin = "endpoint_origin"
            }

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(token, forKey: .token)
                try container.encode(reason, forKey: .reason)
                try container.encode(apnsTimestamp, forKey: .apnsTimestamp)
                try container.encode(jobID, forKey: .jobID)
                try container.encode(recordedAt, forKey: .recordedAt)
                try container.encode(platform, forKey: .platform)
                try container.encode(fcmKind, forKey: .fcmKind)
                try container.encode(endpointOrigin, forKey: .endpointOrigin)
            }
        }

        public struct Day: Encodable {
            var day: String
            var count: Int
        }

        var app: String
        var since: String
        var until: String?
        var total: Int
        var truncated: Bool
        var byReason: [String: Int]
        var byDay: [Day]
        var rows: [Row]

        enum CodingKeys: String, CodingKey {
            case app, since, until, total, truncated, rows
            case byReason = "by_reason"
            case byDay = "by_day"
        }

        public init(app: String, since: Int64, until: Int64?, report: DeadTokenReport) {
            self.app = app
            self.since = RFC3339Milliseconds.format(since)
            self.until = until.map(RFC3339Milliseconds.format)
            total = report.total
            truncated = report.truncated
            byReason = report.byReason
            byDay = report.byDay.map { Day(day: $0.day, count: $0.count) }
            rows = report.records.map { record in
                Row(
                    token: record.token.hex, reason: record.reason,
                    apnsTimestamp: record.apnsTimestamp.map(RFC3339Milliseconds.format), jobID: record.jobID,
                    recordedAt: RFC3339Milliseconds.format(record.recordedAt), platform: record.platform.rawValue,
                    fcmKind: record.fcmKind?.rawValue, endpointOrigin: record.endpointOrigin
                )
            }
        }
    }

    /// The header of the dead-token CSV: the platform columns come last, so that a reader of the earlier five
    /// finds them where they were (and `endpoint_origin`, a web subscription's push service, after those).
    public static let deadTokensCSVHeader =
        "token,reason,apns_timestamp,job_id,recorded_at,platform,fcm_kind,endpoint_origin"

    /// The dead-token rows as CSV, header first.
    public static func deadTokensCSV(_ report: DeadTokenReport) -> String {
        var lines = [deadTokensCSVHeader]
        for record in report.records {
            // The token as it is (`tokenField`): an Android token may start with `-`, which `csvField` would prefix.
            let fields = [
                record.reason, record.apnsTimestamp.map(RFC3339Milliseconds.format) ?? "", record.jobID ?? "",
                RFC3339Milliseconds.format(record.recordedAt), record.platform.rawValue,
                record.fcmKind?.rawValue ?? "", record.endpointOrigin ?? "",
            ].map(csvField)
            lines.append(([tokenField(record.token.hex)] + fields).joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A token as a CSV field, verbatim: a token of either platform is hex or `A-Z a-z 0-9 _ : -` (its column's
    /// CHECK, schemas/033), which needs no quoting and cannot make a formula that calls anything (no parentheses),
    /// while the `'` that `csvField` puts before a leading `-` would change the token.
    public static func tokenField(_ token: String) -> String {
        token.utf8.allSatisfy { Self.isTokenByte($0) } ? token : csvField(token)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// A CSV field, quoted when it holds a comma, quote or line break (and guarded against spreadsheet formulas).
    public static func csvField(_ value: String) -> String {
        var value = value
        if let first = value.first, "=+-@".contains(first) { value = "'" + value }
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Left-aligned columns separated by two spaces.
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }.joined(separator: "  ")
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}
