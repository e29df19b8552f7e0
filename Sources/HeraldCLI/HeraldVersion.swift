/// Herald's release version, as `herald --version` prints it. The number is the latest release heading in
/// CHANGELOG.md (a test holds the two together); the commit and the Swift version come from the build
/// (`BuildInfo`, written by Plugins/BuildInfoPlugin).
enum HeraldVersion {
    /// The semantic version of this release, without a leading `v` (the git tag is `v` + this).
    static let number = "0.9.0"

    /// One line: `herald 0.9.0 (commit 1a2b3c4d5e6f, Swift 6.3.1)`.
    static let description = "herald \(number) (commit \(BuildInfo.commit), Swift \(BuildInfo.swiftVersion))"
}
