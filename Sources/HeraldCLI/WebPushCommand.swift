import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import WebPushCore

/// `herald webpush …`: the VAPID key a web app subscribes with.
struct WebPushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Web Push's VAPID key: make one, or print the application server key a web app subscribes with.",
        subcommands: [WebPushKeyCommand.self, WebPushGenerateKeyCommand.self]
    )
}

/// `herald webpush key --app A`: the application server key (base64url) of the app's VAPID key, what the web app
/// passes to `pushManager.subscribe({userVisibleOnly: true, applicationServerKey})`.
struct WebPushKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Print the app's application server key (base64url): pass it to pushManager.subscribe.",
        discussion: "Reads the app's webpush.vapid_private_key_file from the apps file; prints only the public half."
    )

    @OptionGroup var services: ServiceOptions
    @OptionGroup var apps: AppsFileOptions

    @Option(help: "The app whose key to print.")
    var app: String

    func run() throws {
        let settings = try services.resolve([.appsFile], with: [apps])
        guard let (file, directory) = try AppsFile.read(settings) else {
            throw ValidationError("give the apps file (--apps-file or HERALD_APPS_FILE)")
        }
        try KnownApps(settings).check(app)
        guard let configuration = file.app(app), configuration.webpush != nil else {
            throw ValidationError("app \(app) has no webpush block in the apps file")
        }
        guard let key = try configuration.vapidKey(directory: directory) else {
            throw ValidationError("app \(app) has no webpush block in the apps file")
        }
        print(key.applicationServerKey)
    }
}

/// `herald webpush generate-key --out FILE`: a new P-256 VAPID key in PEM, written readable by its owner only; the
/// application server key is printed.
struct WebPushGenerateKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate-key",
        abstract: "Write a new VAPID private key (P-256, PEM, mode 0600) and print its application server key.",
        discussion: """
            Keep the key for the life of the subscriptions: each one is bound to its public half, and a new key \
            strands every subscription made with the old one. An existing file is never overwritten.
            """
    )

    @Option(help: "Where to write the private key (PEM).")
    var out: String

    func run() throws {
        guard !FileManager.default.fileExists(atPath: out) else {
            throw ValidationError("\(out) exists; a VAPID key is never overwritten (its subscriptions depend on it)")
        }
        let key = VAPIDKey.generate()
        guard
            FileManager.default.createFile(
                atPath: out, contents: Data(key.pem.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw ValidationError("cannot write \(out)")
        }
        print(key.applicationServerKey)
    }
}
