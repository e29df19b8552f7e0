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
    /// The provider token cache of an app with token auth (`auth.type` token) in `environment` (nil: the app's
    /// default; its `auth_by_environment` entry if any, else `auth`), its key read from `key_file`; nil for
    /// certificate auth. The cache is the process's one for the key (`ProviderTokenCache.shared(for:)`), so every
    /// client (APNs, broadcasts, channel management) presents the same token.
    public func providerTokens(
        directory: String, environment: Environment? = nil
    ) throws(ConfigurationError) -> ProviderTokenCache? {
        guard case .token(let teamID, let keyID, let keyFile) = auth(for: environment ?? self.environment) else {
            return nil
        }
        let pem = try AppsFile.read(keyFile, relativeTo: directory, what: "key_file of app \(id)")
        let signer: ProviderTokenSigner
        do {
            signer = try ProviderTokenSigner(teamID: teamID, keyID: keyID, pemKey: pem)
        } catch {
            throw ConfigurationError("app \(id): \(error.message)")
        }
        return ProviderTokenCache.shared(for: signer)
    }

    /// The extra trust roots of the app's endpoints: the PEM text of `ca_file`, if any.
    public func trustRootsPEM(directory: String) throws(ConfigurationError) -> [String] {
        guard let caFile else { return [] }
        return [try AppsFile.read(caFile, relativeTo: directory, what: "ca_file of app \(id)")]
    }
}

extension AppConfiguration {
    /// The credentials for `environment`: its `auth_by_environment` entry, else `auth`.
    public func auth(for environment: Environment) -> Authentication? {
        authByEnvironment?[environment.rawValue] ?? auth
    }

    /// Checks `auth_by_environment`: each key names an environment the app serves.
    func checkAuthByEnvironment() throws(ConfigurationError) {
        for key in (authByEnvironment ?? [:]).keys.sorted() {
            guard let named = Environment(rawValue: key) else {
                throw ConfigurationError(
                    "app \(id): auth_by_environment has \(key), which is not production or sandbox")
            }
            guard servedEnvironments.contains(named) else {
                throw ConfigurationError("app \(id): auth_by_environment names \(key), which the app does not serve")
            }
        }
    }
}
