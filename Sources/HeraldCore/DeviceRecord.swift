import APNSCore

/// A device as the registry holds it.
public struct DeviceRecord: Sendable, Hashable {
    public var token: DeviceToken
    public var userID: String?
    public var locale: String?
    public var topics: [String]

    public init(token: DeviceToken, userID: String? = nil, locale: String? = nil, topics: [String] = []) {
        self.token = token
        self.userID = userID
        self.locale = locale
        self.topics = topics
    }
}

/// The CSV form of a device list: header `token,user_id,locale,topics`, topics separated by `;`.
///
/// Fields may be quoted with `"` (a quoted field may contain commas and `""`). The token may be in the
/// `<ad853c20 3a9b…>` form. A bad row is reported with its line number and the rule it broke, never its token.
public enum DeviceCSV {
    /// The expected header.
    public static let header = ["token", "user_id", "locale", "topics"]

    /// A row that was rejected.
    public struct RowError: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// Checks the header line.
    public static func validateHeader(_ line: String) throws(RowError) {
        let fields = (try? split(line, lineNumber: 1)) ?? []
        guard fields.map({ $0.lowercased() }) == header else {
            throw RowError(line: 1, message: "header must be \(header.joined(separator: ","))")
        }
    }

    /// Parses one data line (1-based `lineNumber` for errors). Blank lines return nil.
    public static func parse(_ line: String, lineNumber: Int) throws(RowError) -> DeviceRecord? {
        if line.allSatisfy({ $0 == " " || $0 == "\r" }) { return nil }
        // PostgreSQL's text refuses U+0000, and a C string would end there: the line is refused as a whole.
        guard !line.utf8.contains(0) else {
            throw RowError(line: lineNumber, message: "the line holds a NUL byte (U+0000)")
        }
        let fields = try split(line, lineNumber: lineNumber)
        guard fields.count == header.count else {
            throw RowError(line: lineNumber, message: "expected 4 fields, found \(fields.count)")
        }
        // The rules of the API's registration (DeviceFields), so that a file imports what the API registers.
        let token: DeviceToken
        do {
            token = try DeviceFields.token(fields[0], kind: .device)
        } catch {
            throw RowError(line: lineNumber, message: error.message)
        }
        let userID = fields[1].isEmpty ? nil : fields[1]
        let locale = fields[2].isEmpty ? nil : fields[2]
        if let userID, let problem = DeviceFields.userIDProblem(userID) {
            throw RowError(line: lineNumber, message: problem)
        }
        if let locale, let problem = DeviceFields.localeProblem(locale) {
            throw RowError(line: lineNumber, message: problem)
        }
        let topics = fields[3].split(separator: ";").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
        guard topics.count <= DeviceFields.maximumTopics else {
            throw RowError(
                line: lineNumber,
                message: "topics has \(topics.count) entries; at most \(DeviceFields.maximumTopics) are allowed")
        }
        for topic in topics {
            if let problem = DeviceFields.topicProblem(topic) { throw RowError(line: lineNumber, message: problem) }
        }
        return DeviceRecord(token: token, userID: userID, locale: locale, topics: topics)
    }

    /// Splits a CSV line into fields, honouring quotes.
    static func split(_ line: String, lineNumber: Int) throws(RowError) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = line.makeIterator()
        var pending: Character? = nil
        while let c = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            pending = next
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                fields.append(field.trimmingSpaces())
                field = ""
            } else if c != "\r" {
                field.append(c)
            }
        }
        guard !quoted else { throw RowError(line: lineNumber, message: "unterminated quoted field") }
        fields.append(field.trimmingSpaces())
        return fields
    }
}

extension String {
    func trimmingSpaces() -> String {
        var view = Substring(self)
        while view.first == " " { view = view.dropFirst() }
        while view.last == " " { view = view.dropLast() }
        return String(view)
    }
}
