import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a release is made of, held against the code: `herald --version` against CHANGELOG.md, and the Docker build
/// context (what deploy/Dockerfile copies, less what .dockerignore leaves out) against the manifest, without a
/// container engine. `make dist` and deploy/dist/check-deb.sh (run by .ci/run) cover the tarball and the .deb.
@Suite struct PackagingTests {
    static let root = TestServices.repositoryRoot

    // MARK: Version

    @Test func versionPrintsTheChangelogsLatestReleaseTheCommitItWasBuiltFromAndTheSwiftVersion() async throws {
        let release = try Self.latestChangelogRelease()
        let result = try await HeraldBinary.run(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.stdout.trimmingCharacters(in: .newlines)
        let pattern = #/^herald (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}|unknown), Swift ([0-9A-Za-z.-]+)\)$/#
        let match = try #require(line.wholeMatch(of: pattern), "unexpected --version output: \(line)")
        #expect(
            String(match.1) == release, "herald --version says \(match.1), CHANGELOG.md's latest release is \(release)")

        // The commit is one of this repository's (a binary built in a checkout knows it; only a tree without .git
        // says unknown).
        let commit = String(match.2)
        if FileManager.default.fileExists(atPath: Self.root + "/.git") {
            #expect(commit != "unknown", "built in a git checkout, yet the commit is unknown")
            let known = try await Self.run(["git", "-C", Self.root, "cat-file", "-e", commit + "^{commit}"])
            #expect(known.status == 0, "\(commit) is not a commit of this repository")
        }
        // The Swift version is the toolchain's that runs these tests (the one that built the binary).
        let swift = try await Self.run(["swift", "--version"])
        #expect(swift.stdout.contains("Swift version \(match.3) "), "Swift \(match.3) vs \(swift.stdout)")
    }

    @Test func theChangelogKeepsAnUnreleasedSectionAboveReleasesNewestFirst() throws {
        let headings = try Self.read("CHANGELOG.md").split(separator: "\n").filter { $0.hasPrefix("## ") }
        #expect(headings.first == "## [Unreleased]")
        let releases = headings.dropFirst().map(String.init)
        #expect(!releases.isEmpty)
        var previous: [Int]? = nil
        for heading in releases {
            let match = try #require(
                heading.wholeMatch(of: #/^## \[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$/#), "bad heading: \(heading)")
            let version = [Int(match.1)!, Int(match.2)!, Int(match.3)!]
            if let previous { #expect(version.lexicographicallyPrecedes(previous), "\(heading) is out of order") }
            previous = version
        }
    }

    // MARK: The Docker build context

    @Test func theDockerBuildContextHoldsWhatTheManifestNamesAndSwiftPMAcceptsIt() async throws {
        let ignored = try Self.dockerIgnorePatterns()
        // Secrets, dev state, build folders and git never go to the engine.
        for path in [
            "deploy/compose/private/secrets.env", "deploy/compose/private/tls/server.key", ".state/services.env",
            ".build/debug/herald", ".git/config", "dist/herald.deb",
        ] {
            #expect(Self.isIgnored(path, by: ignored), "\(path) would be sent to the Docker engine")
        }
        let secretsScript = try Self.read("deploy/compose/secrets.sh")
        #expect(
            secretsScript.contains("DIR=${HERALD_COMPOSE_PRIVATE_DIR:-$HERE/private}"), "secrets.sh writes elsewhere")

        // What the build stage copies from the context, into a directory of its own.
        let context = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestServices.uniqueName("docker-context")
        ).path
        try FileManager.default.createDirectory(atPath: context, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: context) }
        let sources = try Self.dockerfileContextSources()
        #expect(sources.contains("Package.swift") && sources.contains("Package.resolved"))
        var copied = 0
        for source in sources {
            let matches = Self.glob(source)
            #expect(!matches.isEmpty, "COPY \(source): nothing in the repository matches it")
            for path in matches { copied += try Self.copy(path, into: context, skipping: ignored) }
        }
        #expect(copied > 100)

        // SwiftPM loads the manifest against exactly those files: every target's directory must be there.
        let described = try await Self.run(["swift", "package", "describe", "--type", "json"], in: context)
        try #require(described.status == 0, "swift package describe in the Docker context: \(described.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(described.stdout.utf8)) as? [String: Any])
        let targets = (json["targets"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(targets.contains("HeraldCLI"))
        #expect(FileManager.default.fileExists(atPath: context + "/Package.resolved"))
        #expect(FileManager.default.fileExists(atPath: context + "/schemas/001_initial.sql"))
    }

    // MARK: Helpers

    static func read(_ path: String) throws -> String { try String(contentsOfFile: root + "/" + path, encoding: .utf8) }

    /// The newest release heading of CHANGELOG.md (`## [X.Y.Z] - date`), without the brackets.
    static func latestChangelogRelease() throws -> String {
        for line in try read("CHANGELOG.md").split(separator: "\n") {
            if let match = line.wholeMatch(of: #/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/#) {
                return String(match.1)
            }
        }
        throw PackagingTestError("CHANGELOG.md has no release heading")
    }

    /// The sources of every COPY in deploy/Dockerfile that reads the build context (not `--from` another stage).
    static func dockerfileContextSources() throws -> [String] {
        let text = try read("deploy/Dockerfile").replacingOccurrences(of: "\\\n", with: " ")
        var sources: [String] = []
        for line in text.split(separator: "\n") where line.hasPrefix("COPY ") || line.hasPrefix("ADD ") {
            let words = line.split(separator: " ").dropFirst().map(String.init)
            if words.contains(where: { $0.hasPrefix("--from=") }) { continue }
            let arguments = words.filter { !$0.hasPrefix("--") }
            guard arguments.count >= 2, !line.contains("[") else {
                throw PackagingTestError("cannot read the Dockerfile line \(line)")
            }
            sources += arguments.dropLast()
        }
        return sources
    }

    static func dockerIgnorePatterns() throws -> [String] {
        let patterns = try read(".dockerignore").split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        // This reader handles plain patterns only; an exception (`!`) would need Docker's full rules.
        guard !patterns.contains(where: { $0.hasPrefix("!") }) else {
            throw PackagingTestError(".dockerignore has an exception (!), which this test cannot follow")
        }
        return patterns.map { $0.hasPrefix("/") ? String($0.dropFirst()) : $0 }
    }

    /// Docker's rule: a path is left out when a pattern matches it or one of the directories it is in.
    static func isIgnored(_ path: String, by patterns: [String]) -> Bool {
        let parts = path.split(separator: "/")
        for count in 1...parts.count {
            let prefix = parts.prefix(count).joined(separator: "/")
            for pattern in patterns {
                let flags = pattern.contains("**") ? Int32(0) : Int32(FNM_PATHNAME)
                if fnmatch(pattern, prefix, flags) == 0 { return true }
            }
        }
        return false
    }

    /// The repository paths a COPY source names (a glob in the repository root, as Docker expands it).
    static func glob(_ source: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        if !source.contains("/") {
            return names.filter { fnmatch(source, $0, 0) == 0 }.sorted()
        }
        return FileManager.default.fileExists(atPath: root + "/" + source) ? [source] : []
    }

    /// Copies `path` (a file or a directory tree) from the repository into `context`, leaving out ignored paths;
    /// returns how many files it copied.
    static func copy(_ path: String, into context: String, skipping patterns: [String]) throws -> Int {
        if isIgnored(path, by: patterns) { return 0 }
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory) else { return 0 }
        let target = context + "/" + path
        if !isDirectory.boolValue {
            try fileManager.createDirectory(
                atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try fileManager.copyItem(atPath: root + "/" + path, toPath: target)
            return 1
        }
        try fileManager.createDirectory(atPath: target, withIntermediateDirectories: true)
        var count = 0
        for name in try fileManager.contentsOfDirectory(atPath: root + "/" + path).sorted() {
            count += try copy(path + "/" + name, into: context, skipping: patterns)
        }
        return count
    }

    /// Runs a program found on PATH and waits for it (the termination handler resumes; no sleeping).
    static func run(_ arguments: [String], in directory: String? = nil) async throws -> HeraldBinary.Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            TestServices.uniqueName("packaging-run"))
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("stdout")
        let err = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await process.exitStatus()
        return HeraldBinary.Result(
            status: status,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        )
    }
}

struct PackagingTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
