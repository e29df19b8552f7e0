import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` into the target it is applied to (HeraldCLI): the commit the source tree is at and the
/// Swift compiler's version, for `herald --version`. The release version itself is in the repository
/// (`HeraldVersion.swift`), so a plain `swift build` of a fresh clone has it; the commit needs git and a `.git`
/// directory and is `unknown` without them (an exported tree, a Docker build context, which leaves `.git` out).
///
/// A build command rather than a prebuild one: SwiftPM runs prebuild commands only when it plans the build anew,
/// so a commit made since would not be seen. This command's inputs are git's `HEAD` and its reflog (which every
/// commit, checkout, merge and reset appends to) and the compiler, so the build system runs it again whenever one of
/// them changes; it rewrites the file only when its text changes, so nothing else is recompiled otherwise.
@main struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift")
        let scratch = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift.next")
        let package = context.package.directoryURL
        let swiftc = try? context.tool(named: "swiftc").url
        var inputs: [URL] = swiftc.map { [$0] } ?? []
        if let gitDirectory = Self.gitDirectory(of: package) {
            for name in ["HEAD", "logs/HEAD"] {
                let file = gitDirectory.appending(path: name)
                if FileManager.default.fileExists(atPath: file.path) { inputs.append(file) }
            }
        }
        return [
            .buildCommand(
                displayName: "Recording herald's commit and Swift version",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", Self.script, "build-info", output.path, scratch.path, package.path, swiftc?.path ?? "swiftc",
                ],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    /// The repository's git directory (for a worktree, its own one under the main repository's), or nil outside a
    /// checkout or without git.
    static func gitDirectory(of package: URL) -> URL? {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", package.path, "rev-parse", "--absolute-git-dir"]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let path = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !path.isEmpty
        else { return nil }
        return URL(fileURLWithPath: path)
    }

    /// `$1` output file, `$2` scratch file, `$3` package directory, `$4` swiftc. Only `[0-9A-Za-z.-]` reaches the
    /// Swift literals, whatever git or swiftc print.
    static let script = #"""
        set -u
        commit=$(git -C "$3" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
        swift=$("$4" --version 2>/dev/null | sed -n 's/^.*Swift version \([^ ]*\).*$/\1/p' | sed -n 1p)
        commit=$(printf '%s' "$commit" | tr -cd '0-9A-Za-z.-')
        swift=$(printf '%s' "${swift:-unknown}" | tr -cd '0-9A-Za-z.-')
        cat > "$2" <<SWIFT
        // Written by Plugins/BuildInfoPlugin at build time; not in the repository.
        enum BuildInfo {
            /// The commit the binary was built from, or \`unknown\`.
            static let commit = "${commit:-unknown}"
            /// The version of the Swift compiler that built the binary, or \`unknown\`.
            static let swiftVersion = "${swift:-unknown}"
        }
        SWIFT
        if cmp -s "$2" "$1"; then rm -f "$2"; else mv "$2" "$1"; fi
        """#
}
