import Foundation
import HeraldCore

/// An error as `herald` prints it when a command fails: one sentence that says what was wrong (the file, the field,
/// the server's answer) and what to do, never a library's debug description (`Error Domain=NSCocoaErrorDomain
/// Code=260 … UserInfo={…}`, `DecodingError.keyNotFound(CodingKeys(…))`).
///
/// Herald's own errors (`JobError`, `StoreError`, `ConfigurationError`, `AMQPError`, …) already describe themselves
/// in sentences and pass through; Foundation's and the standard library's are put into words here.
package struct ErrorSentence: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }

    /// The sentence for `error`.
    package static func describing(_ error: any Error) -> String {
        if let error = error as? ErrorSentence { return error.description }
        if let error = error as? DecodingError { return error.sentence() }
        let bridged = error as NSError
        // Foundation's file errors (codes below 1024; its coder and other errors are numbered above) and POSIX ones.
        if (bridged.domain == NSCocoaErrorDomain && bridged.code < 1024) || bridged.domain == NSPOSIXErrorDomain {
            return describing(file: bridged)
        }
        if let error = error as? POSIXError {
            return "system call failed: \(String(cString: strerror(error.code.rawValue)))"
        }
        if isHeralds(error) { return String(describing: error) }
        // Another library's error: its type names where it came from; its localized text is its sentence.
        return "\(type(of: error)): \(bridged.localizedDescription)"
    }

    /// Whether `error` is one of Herald's own types, which describe themselves in sentences safe to print.
    static func isHeralds(_ error: any Error) -> Bool {
        let module = String(reflecting: type(of: error)).prefix { $0 != "." }
        return module.hasPrefix("Herald") || module.hasPrefix("APNS") || module == "RabbitMQ"
    }

    /// A file error (reading a key, a CA, an apps file, a CSV): the path and what the system said, and how to fix
    /// the usual ones.
    static func describing(file error: NSError) -> String {
        let path =
            (error.userInfo[NSFilePathErrorKey] as? String)
            ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        let at = path.map { " \($0)" } ?? ""
        switch (error.domain, error.code) {
        case (NSCocoaErrorDomain, CocoaError.fileReadNoSuchFile.rawValue),
            (NSCocoaErrorDomain, CocoaError.fileNoSuchFile.rawValue), (NSPOSIXErrorDomain, Int(ENOENT)):
            return "cannot read\(at): no such file (check the path and the flag or HERALD_* variable that names it)"
        case (NSCocoaErrorDomain, CocoaError.fileReadNoPermission.rawValue), (NSPOSIXErrorDomain, Int(EACCES)):
            return "cannot read\(at): permission denied (the file must be readable by the user herald runs as)"
        case (NSCocoaErrorDomain, CocoaError.fileReadInapplicableStringEncoding.rawValue),
            (NSCocoaErrorDomain, CocoaError.fileReadCorruptFile.rawValue):
            return "cannot read\(at): it is not UTF-8 text"
        case (NSCocoaErrorDomain, CocoaError.fileWriteNoPermission.rawValue):
            return "cannot write\(at): permission denied"
        case (NSCocoaErrorDomain, CocoaError.fileWriteOutOfSpace.rawValue):
            return "cannot write\(at): no space left on the device"
        case (NSPOSIXErrorDomain, let code):
            return "file operation failed\(at): \(String(cString: strerror(Int32(code))))"
        default:
            return "file operation failed\(at): \(error.localizedDescription)"
        }
    }
}
