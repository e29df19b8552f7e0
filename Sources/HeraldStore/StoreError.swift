/// A failure of the store: a code, a message safe to log (never a password, token or row content), and the cause.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public static let invalidURL = Code(rawValue: "invalid_url")
        public static let migrationFailed = Code(rawValue: "migration_failed")
        public static let importFailed = Code(rawValue: "import_failed")
        public static let queryFailed = Code(rawValue: "query_failed")
        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String
    /// The underlying error's type, not its text: PostgresNIO's errors can quote bound values.
    public var underlying: (any Error)?
    public var file: String
    public var line: Int

    public init(
        _ code: Code, _ message: String, underlying: (any Error)? = nil, file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let underlying { text += " (\(Self.summary(of: underlying)))" }
        return text
    }

    /// A one-line summary of a cause that cannot leak bound values: PSQLError's server message and SQLSTATE only.
    static func summary(of error: any Error) -> String {
        String(describing: type(of: error))
    }
}
