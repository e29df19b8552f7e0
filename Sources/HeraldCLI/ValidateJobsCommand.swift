import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore

/// `herald jobs validate`: checks jobs (one JSON document per line, from a file or standard input) by the rules the
/// worker and the API apply (`PreparedJob.decode`), without any service, and prints one verdict per line as soon as
/// it is decided: `accepted`, or `refused<TAB>code<TAB>reason`. The property-based contract test feeds it documents
/// drawn from `schemas/job.schema.json`; a producer can use it to check jobs before publishing them.
struct ValidateJobs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Validate jobs (JSON lines) as the worker and the API do; print accepted or refused per line.",
        discussion: """
            herald jobs validate --file jobs.jsonl
            echo '{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"}}}' | herald jobs validate
            Exits 1 if any line was refused. Blank lines are skipped (and print nothing).
            """
    )

    @Option(help: "A JSON-lines file of jobs ('-' for standard input).")
    var file: String = "-"

    func run() throws {
        var lines = try LineReader(path: file)
        var refused = 0
        while let line = lines.next() {
            if line.allSatisfy(\.isWhitespace) { continue }
            let verdict: String
            do {
                _ = try PreparedJob.decode(Array(line.utf8)) { "validate" }
                verdict = "accepted"
            } catch {
                refused += 1
                verdict = "refused\t\(error.code)\t\(error.message.replacingOccurrences(of: "\n", with: " "))"
            }
            FileHandle.standardOutput.write(Data((verdict + "\n").utf8))
        }
        if refused > 0 { throw ExitCode(1) }
    }
}
