/// Splits a migration file into statements, because PostgreSQL's extended protocol (all PostgresNIO speaks)
/// runs one statement per query.
///
/// Semicolons inside quotes, quoted identifiers, comments and dollar-quoted bodies do not split.
enum SQLScript {
    static func statements(in text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var i = 0

        func flush() {
            let statement = String(current).trimmingWhitespace()
            if !statement.isEmpty, !statement.isOnlyComments { statements.append(statement) }
            current = String.UnicodeScalarView()
        }

        while i < scalars.count {
            let c = scalars[i]
            let next: Unicode.Scalar? = i + 1 < scalars.count ? scalars[i + 1] : nil
            if c == "-" && next == "-" {
                while i < scalars.count && scalars[i] != "\n" {
                    current.append(scalars[i])
                    i += 1
                }
                continue
            }
            if c == "/" && next == "*" {
                while i < scalars.count && !(scalars[i] == "*" && i + 1 < scalars.count && scalars[i + 1] == "/") {
                    current.append(scalars[i])
                    i += 1
                }
                if i < scalars.count {
                    current.append("*")
                    current.append("/")
                    i += 2
                }
                continue
            }
            if c == "'" || c == "\"" {
                current.append(c)
                i += 1
                while i < scalars.count {
                    current.append(scalars[i])
                    if scalars[i] == c {
                        if i + 1 < scalars.count && scalars[i + 1] == c {
                            current.append(c)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    i += 1
                }
                continue
            }
            if c == "$", let tagEnd = dollarTagEnd(scalars, from: i) {
                let tag = Array(scalars[i...tagEnd])
                for s in tag { current.append(s) }
                i = tagEnd + 1
                while i < scalars.count {
                    if scalars[i] == "$", i + tag.count <= scalars.count, Array(scalars[i..<i + tag.count]) == tag {
                        for s in tag { current.append(s) }
                        i += tag.count
                        break
                    }
                    current.append(scalars[i])
                    i += 1
                }
                continue
            }
            if c == ";" {
                flush()
                i += 1
                continue
            }
            current.append(c)
            i += 1
        }
        flush()
        return statements
    }

    /// The index of the closing `$` of a dollar-quote tag (`$$` or `$tag$`) starting at `start`, if there is one.
    private static func dollarTagEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var j = start + 1
        while j < scalars.count {
            let s = scalars[j]
            if s == "$" { return j }
            guard s == "_" || s.properties.isAlphabetic || (j > start + 1 && ("0"..."9").contains(s)) else {
                return nil
            }
            j += 1
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    fileprivate var isOnlyComments: Bool {
        split(separator: "\n").allSatisfy { line in
            let trimmed = String(line).trimmingWhitespace()
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
    }
}
