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
        return (try AppsFile.parse(data), directory.isEmpty ? "." : directory)
    }
}
