import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore

extension AppsFile {
    /// The apps file `apps.file` names, and the directory its relative paths are resolved against; an error that
    /// names the file and where its path came from.
    static func read(_ settings: ResolvedConfiguration) throws -> (apps: AppsFile, directory: String)? {
        guard let path = settings.text(.appsFile) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError(
                "cannot read the apps file \(path) (apps.file, from \(settings.source(of: .appsFile))): "
                    + (FileManager.default.fileExists(atPath: path) ? "it is not readable" : "there is no such file"))
        }
        let directory = (path as NSString).deletingLastPathComponent
        return (try AppsFile.parse(data, path: path), directory.isEmpty ? "." : directory)
    }
}

/// The apps a command may name, when it is given an apps file (`--apps-file`, `HERALD_APPS_FILE` or the
/// configuration file): an app id the file does not list is refused at once, with the nearest listed id, rather than
/// accepted and only seen later as a parked message.
struct KnownApps: Sendable {
    /// The apps file's path, and the ids it lists; nil when no apps file is given (every app id is taken).
    let file: (path: String, ids: [String])?

    init(_ settings: ResolvedConfiguration) throws {
        guard let path = settings.text(.appsFile), let (apps, _) = try AppsFile.read(settings) else {
            file = nil
            return
        }
        file = (path, apps.apps.map(\.id))
    }

    /// Why `app` is refused, or nil when the apps file lists it (or there is none).
    func problem(with app: String) -> String? {
        guard let file, !file.ids.contains(app) else { return nil }
        let hint = NearestName.suggestion(for: app, among: file.ids).map { "; did you mean \($0)?" } ?? ""
        return "app \(app) is not in the apps file \(file.path)\(hint)"
    }

    /// Throws a validation error naming `app` if the apps file does not list it.
    func check(_ app: String) throws {
        if let problem = problem(with: app) { throw ValidationError(problem) }
    }
}
