/// The known name nearest to a misspelt one, for refusals that say "did you mean …?".
///
/// Nearness is the edit distance (insertions, deletions, substitutions and swaps of two neighbouring characters,
/// each counting one), compared without regard to case, `_` or `-`, so `sendAt` is near `send_at` and
/// `max_per_secnd` near `max_per_second`. A name is suggested only when it is close enough to be a typo: at most a
/// third of the longer name's characters differ (and at most 3).
public enum NearestName {
    /// The name in `known` nearest to `name`, or nil when none is close enough to be what was meant. Ties go to the
    /// name listed first.
    ///
    /// ```swift
    /// NearestName.suggestion(for: "max_per_secnd", among: ["max_per_second", "events"])  // "max_per_second"
    /// ```
    public static func suggestion(for name: String, among known: some Sequence<String>) -> String? {
        let typed = Array(folded(name))
        var best: (name: String, distance: Int)?
        for candidate in known {
            let other = Array(folded(candidate))
            let allowed = min(3, max(1, max(typed.count, other.count) / 3))
            guard abs(typed.count - other.count) <= allowed else { continue }
            let distance = editDistance(typed, other)
            guard distance <= allowed, distance < (best?.distance ?? .max) else { continue }
            best = (candidate, distance)
        }
        return best?.name
    }

    /// The edit distance between `a` and `b` (optimal string alignment: a swap of neighbours counts one).
    public static func editDistance(_ a: String, _ b: String) -> Int { editDistance(Array(a), Array(b)) }

    /// Lower case with `_` and `-` dropped: the spellings of one name in snake, kebab and camel case compare equal.
    static func folded(_ name: String) -> String { String(name.lowercased().filter { $0 != "_" && $0 != "-" }) }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows of the distance table: two back (for swaps), the previous, the current.
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, before[j - 2] + 1)
                }
                current[j] = value
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
