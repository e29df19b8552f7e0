import Foundation
import Testing

@testable import HeraldDoctor

/// The report's lines, summary, JSON and exit status, and the apps file's decoding sentences.
@Suite struct DoctorReportTests {
    static let report = DoctorReport(findings: [
        .pass("broker", "logged in to 127.0.0.1:56720 vhost / as herald"),
        .warn("database", "old"),
        .fail("app com.example.news", "key_file /x/AuthKey.p8 is not a P-256 private key"),
    ])

    @Test func linesAndSummaryReadAsTheOperatorSeesThem() {
        #expect(
            Self.report.text
                == """
                PASS broker: logged in to 127.0.0.1:56720 vhost / as herald
                WARN database: old
                FAIL app com.example.news: key_file /x/AuthKey.p8 is not a P-256 private key
                doctor: 1 passed, 1 failed, 1 warning

                """)
    }

    @Test func exitStatusFailsOnFailuresAndOnWarningsOnlyWhenStrict() {
        #expect(Self.report.exitStatus(strict: false) == 1)
        #expect(DoctorReport(findings: [.pass("a", "b"), .warn("c", "d")]).exitStatus(strict: false) == 0)
        #expect(DoctorReport(findings: [.pass("a", "b"), .warn("c", "d")]).exitStatus(strict: true) == 1)
        #expect(DoctorReport(findings: [.pass("a", "b")]).exitStatus(strict: true) == 0)
    }

    @Test func jsonHoldsEveryFindingAndTheCounts() throws {
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.report.json.utf8)) as? [String: Any])
        #expect(object["passed"] as? Int == 1)
        #expect(object["failed"] as? Int == 1)
        #expect(object["warnings"] as? Int == 1)
        let checks = try #require(object["checks"] as? [[String: String]])
        #expect(checks.map { $0["status"] } == ["pass", "warn", "fail"])
        #expect(checks[2]["subject"] == "app com.example.news")
    }

    @Test(arguments: [
        (
            #"{"apps": [{"id": "a", "topic": "a", "environment": "prod", "auth": {"type": "token"}}]}"#,
            "apps[0].environment must be production or sandbox"
        ),
        (
            #"{"apps": [{"id": "a", "topic": "a", "environment": "sandbox", "auth": {"type": "token", "team_id": "T"}}]}"#,
            #"apps[0].auth has no "key_id""#
        ),
        (#"{"apps": [{"id": "a", "topic": 5}]}"#, "apps[0].topic is not a string"),
        (#"{"apps": [{"id": "a","#, "it is not valid JSON: expected a string key at line 1, column 22"),
        (
            #"{"apps": [{"id": "a", "topic": "a", "environment": "sandbox", "auth": {"type": "p8"}}]}"#,
            "apps[0].auth: auth.type must be token or certificate"
        ),
        (
            #"{"apps": [{"id": "a", "topic": "a", "environment": "sandbox", "auth": {"type": "certificate", "p12_file": "x"}}, {"id": "a", "topic": "b", "environment": "sandbox", "auth": {"type": "certificate", "p12_file": "x"}}]}"#,
            "app a is listed twice"
        ),
    ])
    func anAppsFileThatDoesNotParseIsNamedByItsField(file: String, sentence: String) async throws {
        let report = try await Self.doctorReport(appsFile: file)
        #expect(
            report.findings.first { $0.subject == "apps file" }?.message.contains(": \(sentence) (docs/devices.md")
                == true, "\(report.text)")
        #expect(!report.text.contains("DecodingError") && !report.text.contains("Error Domain"))
    }

    @Test(arguments: [
        ("ABCDE12345", true), ("abcde12345", false), ("ABCDE1234", false), ("ABCDE123456", false),
        ("ABCDE-1234", false),
    ])
    func appleIdsAreTenCapitalLettersOrDigits(id: String, valid: Bool) {
        #expect(Doctor.isAppleID(id) == valid)
    }

    /// The apps-file part of a run over `appsFile`'s text (the other parts are unset and fail).
    static func doctorReport(appsFile text: String) async throws -> DoctorReport {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString).json")
            .path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let doctor = Doctor(
            deployment: .init(
                amqpURL: .failure(.init("x")), databaseURL: .failure(.init("x")), appsFile: path,
                schemasDirectory: "schemas"),
            logger: .init(label: "test"))
        return DoctorReport(findings: await doctor.checkApps())
    }
}
