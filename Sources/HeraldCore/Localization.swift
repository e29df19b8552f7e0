/// BCP 47 fallback for choosing a localized variant: `zh-Hant-TW` → `zh-Hant` → `zh` → none.
public enum Localization {
    /// Normalises a tag for comparison: lowercase, `_` as `-`.
    public static func normalize(_ tag: String) -> String {
        String(tag.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// The candidates for `locale`, most specific first.
    public static func fallbackChain(for locale: String) -> [String] {
        var parts = normalize(locale).split(separator: "-").map(String.init)
        var chain: [String] = []
        while !parts.isEmpty {
            chain.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return chain
    }

    /// The key of `variants` (normalised keys) that serves `locale`, or nil for the default.
    public static func bestMatch(for locale: String?, in variants: Set<String>) -> String? {
        guard let locale, !variants.isEmpty else { return nil }
        return fallbackChain(for: locale).first { variants.contains($0) }
    }

    /// Whether a device locale is covered by a locale filter entry (`fr` covers `fr-CA`).
    public static func matches(_ locale: String?, filter: [String]) -> Bool {
        guard let locale else { return false }
        let chain = Set(fallbackChain(for: locale))
        return filter.contains { chain.contains(normalize($0)) }
    }
}
