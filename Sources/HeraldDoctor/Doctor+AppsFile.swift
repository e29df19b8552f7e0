import Foundation
import HeraldCore

extension Doctor {
    /// The apps file parses and passes its checks; then each app's credentials and endpoints.
    func checkApps() async -> [DoctorFinding] {
        guard let path = deployment.appsFile else {
            return [.fail("apps file", "no apps file: pass --apps-file or set HERALD_APPS_FILE")]
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let why = FileManager.default.fileExists(atPath: path) ? "is not readable" : "does not exist"
            return [.fail("apps file", "\(path) \(why): pass --apps-file or set HERALD_APPS_FILE to the apps file")]
        }
        let file: AppsFile
        do {
            file = try AppsFile.parse(data, path: path)
        } catch {
            return [
                .fail(
                    "apps file",
                    "\(path) is not a valid apps file: \(Self.appsFileProblem(data, error, path: path)) (docs/devices.md, The apps "
                        + "file)")
            ]
        }
        guard !file.apps.isEmpty else {
            return [.fail("apps file", "\(path) lists no app: add one (docs/devices.md, The apps file)")]
        }
        let directory = (path as NSString).deletingLastPathComponent
        let ids = file.apps.map(\.id).joined(separator: ", ")
        var findings = [DoctorFinding.pass("apps file", "\(path) parses: \(file.apps.count) app(s): \(ids)")]
        for app in file.apps {
            findings += await checkApp(app, directory: directory.isEmpty ? "." : directory)
        }
        return findings
    }

    /// Why `AppsFile.parse` refused the file, as a sentence (its messages name the field, never a decoder's dump).
    static func appsFileProblem(_ data: Data, _ error: ConfigurationError, path: String = "") -> String {
        for prefix in ["apps file \(path) is not valid JSON", "apps file is not valid JSON"]
        where error.message.hasPrefix(prefix) {
            return "it is not valid JSON" + error.message.dropFirst(prefix.count)
        }
        for prefix in ["apps file is not valid: ", "apps file: "] where error.message.hasPrefix(prefix) {
            return String(error.message.dropFirst(prefix.count))
        }
        return error.message
    }
}
