import Foundation
import HeraldCommandLine
import HeraldMessaging

/// How `herald parked` prints parked messages: headers and sizes, never a body.
enum ParkedOutput {
    /// One line per message: parked time (UTC) and age, attempts, size, origin, job, reason.
    static func table(_ messages: [ParkedMessage], now: Int64) -> String {
        var lines = [
            "PARKED (UTC)          AGE     ATTEMPTS  BYTES     ORIGIN                JOB                   REASON"
        ]
        for message in messages {
            let parked = message.parkedAt.map(timestamp) ?? "unknown"
            let age = message.age(at: now).map { ConfigurationValue.renderPeriod(.seconds(roundedAge($0))) } ?? "-"
            let job = [message.app, message.jobID ?? message.messageID].compactMap { $0 }.joined(separator: "/")
            lines.append(
                [
                    pad(parked, 21), pad(age, 7), pad(message.attempts.map(String.init) ?? "-", 9),
                    pad(String(message.bodySize), 9), pad(message.originQueue ?? "-", 21),
                    pad(job.isEmpty ? "-" : job, 21), String((message.reason ?? "-").prefix(120)),
                ].joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    /// The counts of a pass, and whether more may match.
    static func summary(_ pass: ParkedMessages.Pass, verb: String) -> String {
        var line = "\(verb) \(pass.taken.count) of \(pass.scanned) parked message(s) looked at"
        if pass.incomplete { line += "; more may match: run it again" }
        return line
    }

    /// `{"messages": […], "scanned": n, "incomplete": b}`, keys sorted.
    static func json(_ pass: ParkedMessages.Pass) throws -> String {
        struct Document: Encodable {
            let messages: [ParkedMessage]
            let scanned: Int
            let incomplete: Bool
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(
            Document(messages: pass.taken, scanned: pass.scanned, incomplete: pass.incomplete))
        return String(decoding: data, as: UTF8.self)
    }

    private static func timestamp(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// An age to the minute below a day, to the hour below ten days, else to the day: for reading, not arithmetic.
    private static func roundedAge(_ seconds: Int64) -> Int64 {
        let unit: Int64 = seconds < 86_400 ? 60 : seconds < 864_000 ? 3600 : 86_400
        return seconds < 60 ? seconds : seconds / unit * unit
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        let cut = String(text.prefix(width))
        return cut + String(repeating: " ", count: max(0, width - cut.count))
    }
}
