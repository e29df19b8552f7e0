/// Unknown field names, refused with the nearest known one: "unknown field sendAt in the job; did you mean send_at?".
///
/// A typo in an optional field (`sendAt`, `colapse_id`) would otherwise be ignored and the job sent as if the field
/// were absent: at once instead of at its time, without its collapse id. The contract only ever adds optional fields,
/// and a producer that sends a field this version does not know is told so rather than silently served less.
public enum JobFieldSuggestion {
    /// The known name nearest to `name`, if one is near enough to be a likely typo: compared without case, `_` and
    /// `-` (so `sendAt` finds `send_at`), by edit distance, at most a third of the name's length (and at least 2).
    public static func nearest(to name: String, in known: [String]) -> String? {
        let folded = fold(name)
        guard !folded.isEmpty else { return nil }
        var best: (name: String, distance: Int)? = nil
        for candidate in known {
            let distance = editDistance(folded, fold(candidate))
            if distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        guard let best, best.distance <= max(2, folded.count / 3) else { return nil }
        return best.name
    }

    /// The sentence for an unknown field `name` of `place` ("the job", "target", "the device registration"): the
    /// nearest known name if there is one, else the known names. The name is shown shortened and without control
    /// characters (it is the producer's text, and ends up in logs and headers).
    public static func message(unknown name: String, in place: String, known: [String]) -> String {
        var sentence = "unknown field \(printable(name)) in \(place)"
        if let suggestion = nearest(to: name, in: known) {
            sentence += "; did you mean \(suggestion)?"
        } else {
            sentence += " (known fields: \(known.joined(separator: ", ")))"
        }
        return sentence
    }

    /// The first unknown key of `keys` (in sorted order, so the answer is the same every time), or nil.
    public static func firstUnknown(_ keys: some Sequence<String>, known: [String]) -> String? {
        keys.filter { !known.contains($0) }.min()
    }

    /// `name` as it may be shown: at most 40 characters, control characters as `?`.
    static func printable(_ name: String) -> String {
        var shown = String(
            String.UnicodeScalarView(
                name.unicodeScalars.prefix(40).map { JobLimits.isControl($0) ? "?" : $0 }))
        if name.unicodeScalars.count > 40 { shown += "…" }
        return shown.isEmpty ? "\"\"" : shown
    }

    /// Lowercase, without `_` and `-`.
    static func fold(_ name: String) -> [Unicode.Scalar] {
        name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" }
    }

    /// The Levenshtein distance (insertions, deletions, substitutions) between `a` and `b`, in two rows.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Names are short; a 1,000-character key is not a typo of any of them.
        guard a.count <= 100, b.count <= 100 else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
