import APNSCore
import Foundation

extension AppsFile {
    /// The text of a file the apps file names: `path` relative to `directory` (the apps file's) unless absolute. The
    /// error names `what` and the path, never the file's content.
    public static func read(_ path: String, relativeTo directory: String, what: String) throws(ConfigurationError)
        -> String
    {
        let full = path.hasPrefix("/") ? path : directory + "/" + path
        guard let text = try? String(contentsOfFile: full, encoding: .utf8) else {
            throw ConfigurationError("cannot read \(what) at \(full)")
        }
        return text
    }
}

extension AppConfiguration {
    /// The provider token cache of an app with token auth (`auth.type` token), its key read from `key_file`; nil for
    /// certificate auth. One cache per key serves every client of the app (APNs, channels), so the JWT is shared.
    public func providerTokens(directory: String) throws(ConfigurationError) -> ProviderTokenCache? {
        guard case .token(let teamID, let keyID, let keyFile) = auth else { return nil }
        let pem = try AppsFile.read(keyFile, relativeTo: directory, what: "key_file of app \(id)")
        let signer: ProviderTokenSigner
        do {
            signer = try ProviderTokenSigner(teamID: teamID, keyID: keyID, pemKey: pem)
        } catch {
            throw ConfigurationError("app \(id): \(error.message)")
        }
        return ProviderTokenCache(signer: signer) { Int64(Date().timeIntervalSince1970) }
    }

    /// The extra trust roots of the app's endpoints: the PEM text of `ca_file`, if any.
    public func trustRootsPEM(directory: String) throws(ConfigurationError) -> [String] {
        guard let caFile else { return [] }
        return [try AppsFile.read(caFile, relativeTo: directory, what: "ca_file of app \(id)")]
    }
}
