/// Unknown field names, refused with the nearest known one: "unknown field sendAt in the job; did you mean send_at?".
///
/// A typo in an optional field (`sendAt`, `colapse_id`) would otherwise be ignored and the job sent as if the field
/// were absent: at once instead of at its time, without its collapse id. The contract only ever adds optional fields,
/// and a producer that sends a field this version does not know is told so rather than silently served less.
public enum JobFieldSuggestion {
    /// The known name nearest to `name`, if one is near enough to be a likely typo (``NearestName``: compared without
    /// case, `_` and `-`, so `sendAt` finds `send_at`).
    public static func nearest(to name: String, in known: [String]) -> String? {
        name.isEmpty ? nil : NearestName.suggestion(for: name, among: known)
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
}
