import APNSCore
import Configuration
import Foundation
import HeraldCore

/// The configuration file, read once: a JSON object whose keys are the registry's, nested
/// (`{"worker": {"prefetch": 512}}`) or dotted (`{"worker.prefetch": 512}`).
struct ConfigurationFile: Sendable {
    /// The path as given.
    let path: String
    /// The provider over the file's values (swift-configuration's JSON snapshot).
    let provider: ConfigurationFileProvider
    /// Each leaf's dotted key and its value as JSON text, for sentences about a value of the wrong type.
    let leaves: [String: String]

    /// Reads and checks the file; `origin` names where its path came from (`--config`, `HERALD_CONFIG_FILE`).
    init(path: String, origin: String) throws(ConfigurationProblems) {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "it is not readable" : "there is no such file"
            throw ConfigurationProblems(["cannot read the configuration file \(path) (from \(origin)): \(reason)"])
        }
        do {
            _ = try PayloadValue(json: data)
        } catch {
            let (line, column) = JSONTextPosition.lineAndColumn(ofByte: error.offset, in: data)
            throw ConfigurationProblems([
                "the configuration file \(path) (from \(origin)) is not valid JSON: \(error.message) at line \(line), "
                    + "column \(column)"
            ])
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigurationProblems([
                "the configuration file \(path) (from \(origin)) is not a JSON object of Herald's keys "
                    + "(herald config docs lists them)"
            ])
        }
        var leaves: [String: String] = [:]
        Self.collect(object, prefix: [], into: &leaves)
        let unknown = leaves.keys.filter { ConfigurationKey.named($0) == nil }.sorted()
        guard unknown.isEmpty else {
            throw ConfigurationProblems(
                unknown.map { name in
                    let nearest = NearestName.suggestion(for: name, among: ConfigurationKey.all.map(\.name))
                    return "the configuration file \(path) sets \(name), which is not a key of Herald's configuration"
                        + (nearest.map { "; did you mean \($0)?" } ?? "") + " (herald config docs lists them)"
                })
        }
        do {
            let snapshot = try JSONSnapshot(data: data.bytes, providerName: "file", parsingOptions: .default)
            provider = ConfigurationFileProvider(fileSnapshot: snapshot)
        } catch {
            throw ConfigurationProblems([
                "the configuration file \(path) (from \(origin)) holds a value that is not a string, a number, "
                    + "a boolean or a list of strings"
            ])
        }
        self.leaves = leaves
    }

    private static func collect(_ object: [String: Any], prefix: [String], into leaves: inout [String: String]) {
        for (name, value) in object {
            let path = prefix + [name]
            if let nested = value as? [String: Any] {
                collect(nested, prefix: path, into: &leaves)
            } else if !(value is NSNull) {
                let text =
                    (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]))
                    .map { String(decoding: $0, as: UTF8.self) } ?? "?"
                leaves[path.joined(separator: ".")] = text
            }
        }
    }
}

/// swift-configuration's JSON file snapshot as a provider, built from bytes already read (`FileProvider` reads the
/// file itself, asynchronously; the commands resolve their configuration before anything async starts).
struct ConfigurationFileProvider: ConfigProvider {
    let fileSnapshot: JSONSnapshot

    var providerName: String { fileSnapshot.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try fileSnapshot.value(forKey: key, type: type)
    }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { fileSnapshot }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (
                _ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>
            ) async throws -> Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
