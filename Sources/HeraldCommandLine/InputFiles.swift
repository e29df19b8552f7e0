import APNSCore
import ArgumentParser
import Foundation

// Files that flags name (certificates, keys): an unreadable one is a `ValidationError` that names it.

/// Reads a text file or fails naming it.
package func read(_ path: String) throws -> String {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw ValidationError("cannot read \(path)")
    }
    return text
}

/// The public key PEM from a file holding either a public key or a .p8 private key.
package func publicKeyPEM(atPath path: String) throws -> String {
    let text = try read(path)
    if text.contains("PRIVATE KEY") {
        do {
            return try ProviderTokenSigner(teamID: "", keyID: "", pemKey: text).publicKeyPEM
        } catch {
            throw ValidationError("\(path): \(error.message)")
        }
    }
    return text
}
