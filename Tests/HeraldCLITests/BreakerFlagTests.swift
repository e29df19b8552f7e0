import Testing

/// `herald worker`'s prune breaker flags and `herald devices restore`'s inputs are checked before anything starts.
@Suite struct BreakerFlagTests {
    @Test(arguments: [
        (["worker", "--prune-breaker-share", "0"], "--prune-breaker-share"),
        (["worker", "--prune-breaker-share", "1.5"], "--prune-breaker-share"),
        (["worker", "--prune-breaker-minimum", "0"], "--prune-breaker-minimum"),
        (["devices", "restore", "--app", "a", "--job", String(repeating: "j", count: 129)], "over 128"),
        (["devices", "restore", "--app", "a\u{1}", "--job", "j"], "control character"),
    ])
    func outOfRangeValuesAreRefusedWithTheFlagNamed(_ arguments: [String], _ named: String) async throws {
        let result = try await HeraldBinary.run(arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(named), "\(result.stderr)")
    }
}
