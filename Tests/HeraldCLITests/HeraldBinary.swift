import Foundation
import HeraldStore
import HeraldTestSupport

/// Runs the built `herald` executable, as an operator would.
enum HeraldBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `herald` binary next to the test bundle (both are in the build's bin directory).
    static var path: String {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald")
                .path,
            TestServices.repositoryRoot + "/.build/debug/herald",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
    }

    /// Runs `herald` with `arguments` and waits for it to exit (no sleeping: the termination handler resumes).
    /// `removing` names variables of the test's own environment the command must not see (`make test` exports the
    /// services' URLs).
    static func run(_ arguments: [String], environment: [String: String] = [:], removing: Set<String> = []) async throws
        -> Result
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestServices.uniqueName("herald-cli"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["HERALD_LOG_LEVEL"] = "warning"
        for (key, value) in environment { env[key] = value }
        for key in removing { env[key] = nil }
        process.environment = env
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await process.exitStatus()
        return Result(
            status: status,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        )
    }

    /// A `postgres://` URL for `database` (the test server's credentials with its database name).
    static func databaseURL(_ database: DatabaseConfiguration) -> String {
        var components = URLComponents(string: TestServices.databaseURL)!
        components.path = "/" + database.database
        return components.string!
    }
}
