import Foundation
import PackagePlugin

/// Writes `BuildInfo.swift` into the target it is applied to (HeraldCLI) before every build: the commit the source
/// tree is at and the Swift compiler's version, for `herald --version`. The release version itself is in the
/// repository (`HeraldVersion.swift`), so a plain `swift build` of a fresh clone has it; the commit needs git and a
/// `.git` directory and is `unknown` without them (an exported tree, a Docker build context without `.git`).
///
/// The file is rewritten only when its text changes, so an unchanged tree recompiles nothing.
@main struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildInfo")
        let scratch = context.pluginWorkDirectoryURL.appending(path: "BuildInfo.swift.next")
        let swiftc = (try? context.tool(named: "swiftc").url.path) ?? "swiftc"
        return [
            .prebuildCommand(
                displayName: "Recording herald's commit and Swift version",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", Self.script, "build-info", output.path, scratch.path, context.package.directoryURL.path,
                    swiftc,
                ],
                outputFilesDirectory: output
            )
        ]
    }

    /// `$1` output directory, `$2` scratch file, `$3` package directory, `$4` swiftc. Only `[0-9A-Za-z.-]` reaches
    /// the Swift literals, whatever git or swiftc print.
    static let script = #"""
        set -u
        mkdir -p "$1"
        commit=$(git -C "$3" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
        if [ "$commit" != unknown ]; then
            git -C "$3" update-index -q --refresh >/dev/null 2>&1
            git -C "$3" diff-index --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
        fi
        swift=$("$4" --version 2>/dev/null | sed -n 's/^.*Swift version \([^ ]*\).*$/\1/p' | sed -n 1p)
        commit=$(printf '%s' "$commit" | tr -cd '0-9A-Za-z.-')
        swift=$(printf '%s' "${swift:-unknown}" | tr -cd '0-9A-Za-z.-')
        cat > "$2" <<SWIFT
        // Written by Plugins/BuildInfoPlugin at build time; not in the repository.
        enum BuildInfo {
            /// The commit the binary was built from (\`-dirty\` with uncommitted changes), or \`unknown\`.
            static let commit = "${commit:-unknown}"
            /// The version of the Swift compiler that built the binary, or \`unknown\`.
            static let swiftVersion = "${swift:-unknown}"
        }
        SWIFT
        if cmp -s "$2" "$1/BuildInfo.swift"; then rm -f "$2"; else mv "$2" "$1/BuildInfo.swift"; fi
        """#
}
