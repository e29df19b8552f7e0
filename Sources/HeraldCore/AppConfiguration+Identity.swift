extension AppConfiguration {
    /// Identity tokens (docs/api.md): the app's backend signs, with a secret it shares with Herald, that a device may
    /// be bound to a user id or an activity id. A register-only API key (the one an app carries, so anyone's) binds
    /// only with such a token unless `required` is false; keys with the send or admin scope (backend keys) never
    /// need one.
    public struct Identity: Sendable, Hashable, Codable {
        /// A file holding the HMAC secret (16 to 1024 bytes; a final newline is not part of it). Nil: no token can be
        /// checked, so a register-only key binds nothing (while `required`).
        public var secretFile: String?
        /// Whether a register-only key needs a token to bind (nil is true). False lets any holder of the app's
        /// register key bind any user id: only for an app without a backend, and never for private notifications.
        public var required: Bool?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case secretFile = "secret_file"
            case required
        }

        public init(secretFile: String? = nil, required: Bool? = nil) {
            self.secretFile = secretFile
            self.required = required
        }

        /// Whether a register-only key needs a token to bind (the default: yes).
        public var isRequired: Bool { required ?? true }

        func check(app: String) throws(ConfigurationError) {
            if let secretFile, secretFile.isEmpty {
                throw ConfigurationError("app \(app): identity.secret_file is empty")
            }
        }
    }

    /// The identity secret of the app: the text of `identity.secret_file` without its final newline, checked to hold
    /// 16 to 1024 bytes; nil when none is named. The error names the file, never its content.
    public func identitySecret(directory: String) throws(ConfigurationError) -> [UInt8]? {
        guard let path = identity?.secretFile else { return nil }
        let text = try AppsFile.read(path, relativeTo: directory, what: "identity.secret_file of app \(id)")
        var bytes = Array(text.utf8)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard (16...1024).contains(bytes.count) else {
            throw ConfigurationError("app \(id): identity.secret_file must hold 16 to 1024 bytes")
        }
        return bytes
    }
}
