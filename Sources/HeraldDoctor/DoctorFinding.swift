import Foundation

/// One line of `herald doctor`: what was checked, and whether it is right.
///
/// `message` is a sentence an operator can act on: what is wrong, and the file, flag or environment variable that
/// fixes it. It never holds a password, a key, a provider token or a library's debug description.
public struct DoctorFinding: Sendable, Hashable, Codable {
    /// Whether the check passed.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Right as it is.
        case pass
        /// Works, but will not for long or not as intended (a certificate near expiry, a queue as an older Herald
        /// declared it); fails the run only with `--strict`.
        case warn
        /// Wrong: the first real send would fail, or could not be checked at all.
        case fail

        /// `PASS`, `WARN` or `FAIL`.
        public var label: String { rawValue.uppercased() }
    }

    /// Whether the check passed.
    public var status: Status
    /// What was checked: `broker`, `database`, `apps file` or `app <id>`.
    public var subject: String
    /// The sentence.
    public var message: String

    public init(_ status: Status, _ subject: String, _ message: String) {
        self.status = status
        self.subject = subject
        self.message = message
    }

    static func pass(_ subject: String, _ message: String) -> DoctorFinding { .init(.pass, subject, message) }
    static func warn(_ subject: String, _ message: String) -> DoctorFinding { .init(.warn, subject, message) }
    static func fail(_ subject: String, _ message: String) -> DoctorFinding { .init(.fail, subject, message) }

    /// `PASS broker: logged in to 127.0.0.1:56720 vhost / as herald`.
    public var line: String { "\(status.label) \(subject): \(message)" }
}

/// Every finding of one `herald doctor` run, in the order checked, with the summary and the exit status.
public struct DoctorReport: Sendable, Hashable {
    /// The findings: broker, database, apps file, then each app in the file's order.
    public var findings: [DoctorFinding]

    public init(findings: [DoctorFinding]) { self.findings = findings }

    /// How many checks passed.
    public var passed: Int { count(.pass) }
    /// How many failed.
    public var failed: Int { count(.fail) }
    /// How many warned.
    public var warnings: Int { count(.warn) }

    private func count(_ status: DoctorFinding.Status) -> Int { findings.count { $0.status == status } }

    /// 0 when nothing failed (and, with `strict`, nothing warned); 1 otherwise.
    public func exitStatus(strict: Bool) -> Int32 {
        failed > 0 || (strict && warnings > 0) ? 1 : 0
    }

    /// `doctor: 9 passed, 1 failed, 0 warnings`.
    public var summary: String {
        "doctor: \(passed) passed, \(failed) failed, \(warnings) warning\(warnings == 1 ? "" : "s")"
    }

    /// One line per finding, then the summary.
    public var text: String {
        (findings.map(\.line) + [summary]).joined(separator: "\n") + "\n"
    }

    /// `{"checks": [{"status", "subject", "message"}, …], "passed", "failed", "warnings"}`, keys sorted.
    public var json: String {
        struct Document: Encodable {
            var checks: [DoctorFinding]
            var passed: Int
            var failed: Int
            var warnings: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let document = Document(checks: findings, passed: passed, failed: failed, warnings: warnings)
        // Strings and integers only: encoding cannot fail.
        let data = (try? encoder.encode(document)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
