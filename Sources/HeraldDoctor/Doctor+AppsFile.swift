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
            file = try AppsFile.parse(data)
        } catch {
            return [
                .fail(
                    "apps file",
                    "\(path) is not a valid apps file: \(Self.appsFileProblem(data, error)) (docs/devices.md, The apps "
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

    /// Why `AppsFile.parse` refused the file, as a sentence: its own checks say it already; a decoding failure is
    /// decoded again here to name the field, instead of printing Foundation's description of it.
    static func appsFileProblem(_ data: Data, _ error: ConfigurationError) -> String {
        do {
            _ = try JSONDecoder().decode(AppsFile.self, from: data)
        } catch let decoding as DecodingError {
            return sentence(decoding)
        } catch {
            return "it is not valid JSON"
        }
        // `AppsFile.parse`'s own checks: sentences already ("apps file: app a is listed twice").
        return error.message.hasPrefix("apps file: ") ? String(error.message.dropFirst(11)) : error.message
    }

    static func sentence(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "\(field(context.codingPath, root: "the file")) has no \"\(key.stringValue)\""
        case .typeMismatch(let type, let context):
            return "\(field(context.codingPath, root: "the file")) is not \(kind(type))"
        case .valueNotFound(_, let context):
            return "\(field(context.codingPath, root: "the file")) is null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "it is not valid JSON" }
            let name = field(context.codingPath, root: "the file")
            if context.codingPath.last?.stringValue == "environment"
                || context.codingPath.count > 2
                    && context.codingPath[context.codingPath.count - 2].stringValue == "environments"
            {
                return "\(name) must be production or sandbox"
            }
            // Our own decoders' messages ("auth.type must be token or certificate") are sentences already.
            if context.debugDescription.contains(" must ") {
                return "\(field(Array(context.codingPath.dropLast()), root: "the file")): \(context.debugDescription)"
            }
            return "\(name) has a value that is not allowed"
        @unknown default:
            return "it does not decode"
        }
    }

    /// `apps[0].auth.key_file`.
    static func field(_ path: [any CodingKey], root: String) -> String {
        guard !path.isEmpty else { return root }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [Any].Type: return "a list"
        default: return "an object"
        }
    }
}
