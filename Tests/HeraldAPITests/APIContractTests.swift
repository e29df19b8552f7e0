import Foundation
import HeraldTestSupport
import Testing

/// The property-based half of the API contract (docs/testing.md): schemathesis draws requests from
/// `schemas/openapi.yaml` (and the job schema it carries) against a live API, and checks that none gets a 5xx, that
/// valid ones are not refused for their form and invalid ones are, and that answers match the document. Run by
/// `make test` (and `make contract`), which set `HERALD_CONTRACT_VENV` to the tools' virtual environment
/// (tools/contract/requirements.txt); without it the test is skipped.
@Suite(.needsServices) struct APIContractTests {
    static let venv = ProcessInfo.processInfo.environment["HERALD_CONTRACT_VENV"]
    /// Examples per operation (schemathesis' --max-examples); `HERALD_CONTRACT_API_EXAMPLES` overrides it.
    static let examples = ProcessInfo.processInfo.environment["HERALD_CONTRACT_API_EXAMPLES"] ?? "10"

    /// Every check that holds a response to the document, and both data checks: valid data accepted, invalid refused.
    static let checks = [
        "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
        "response_headers_conformance", "positive_data_acceptance", "negative_data_rejection", "unsupported_method",
        "allow_header_conformance", "missing_required_header", "ignored_auth",
    ]

    @Test(.enabled(if: venv != nil, "HERALD_CONTRACT_VENV is not set (make contract sets it)"))
    func requestsDrawnFromTheDocumentGetTheAnswersItPromises() async throws {
        try await APIHarness.run(live: true) { h in
            let port = try #require(h.client.port)
            let root = TestServices.repositoryRoot
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "herald-contract-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let output = directory.appendingPathComponent("schemathesis.txt")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let handle = try FileHandle(forWritingTo: output)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.venv! + "/bin/schemathesis")
            process.currentDirectoryURL = directory
            process.arguments = [
                "run", root + "/schemas/openapi.yaml", "--url", "http://127.0.0.1:\(port)",
                "--header", "Authorization: Bearer \(h.keyA)",
                "--checks", Self.checks.joined(separator: ","),
                // Channel routes need Apple's channel API (an apps file and credentials): ChannelRoutesTests.
                "--exclude-path-regex", "channels",
                "--max-examples", Self.examples, "--generation-deterministic", "--generation-allow-x00", "false",
                "--workers", "1", "--continue-on-failure", "--no-color",
            ]
            var environment = ProcessInfo.processInfo.environment
            environment["SCHEMATHESIS_HOOKS"] = "schemathesis_hooks"
            environment["PYTHONPATH"] = root + "/tools/contract"
            environment["HERALD_CONTRACT_APP"] = APIHarness.appA
            process.environment = environment
            process.standardOutput = handle
            process.standardError = handle
            let status: Int32 = try await process.exitStatus()
            try handle.close()
            let report = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(status == 0, "schemathesis found requests the API answers against its document:\n\(report)")
            // The summary (operations, test cases, checks passed), for the log of a passing run.
            print(report.split(separator: "\n").suffix(40).joined(separator: "\n"))
        }
    }
}
