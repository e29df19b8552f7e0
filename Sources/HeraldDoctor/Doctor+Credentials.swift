import APNSCore
import Foundation
import HeraldCore
import NIOSSL

extension Doctor {
    /// A TLS client identity from a p12, for the endpoint check of a certificate app.
    struct ClientIdentity {
        var chain: [NIOSSLCertificate]
        var key: NIOSSLPrivateKey
        var file: String
    }

    /// One app: its credential, its trust root and each endpoint it sends to.
    func checkApp(_ app: AppConfiguration, directory: String) async -> [DoctorFinding] {
        let subject = "app \(app.id)"
        var findings: [DoctorFinding] = []
        var identity: ClientIdentity?
        switch app.auth {
        case .token(let teamID, let keyID, let keyFile):
            findings += checkToken(
                teamID: teamID, keyID: keyID, keyFile: Self.resolve(keyFile, in: directory), subject: subject)
        case .certificate(let p12File, let passphraseEnv):
            let (finding, opened) = checkCertificate(
                p12File: Self.resolve(p12File, in: directory), passphraseEnv: passphraseEnv, subject: subject)
            findings.append(finding)
            identity = opened
        case nil:
            // No APNs credentials (an FCM or Web Push app): nothing of Apple's to check. AppsFile.parse refused an app
            // with no provider at all.
            findings.append(.pass(subject, "no APNs credentials (auth): its iOS devices, if any, are not sent to"))
            findings += await checkFCM(app, directory: directory)
            findings += checkWebPush(app, directory: directory)
            return findings
        }
        var roots: [NIOSSLCertificate] = []
        var caFile: String?
        if let file = app.caFile {
            let path = Self.resolve(file, in: directory)
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
                let why = FileManager.default.fileExists(atPath: path) ? "holds no PEM certificate" : "does not exist"
                findings.append(
                    .fail(
                        subject, "ca_file \(path) \(why): fix ca_file in the apps file, or remove it for Apple's hosts")
                )
                return findings
            }
            roots = certificates
            caFile = path
        }
        for environment in app.servedEnvironments {
            // `AppsFile.parse` checked every served environment's endpoint.
            guard let (host, port) = try? app.resolvedEndpoint(for: environment) else { continue }
            findings.append(
                await checkEndpoint(
                    host: host, port: port, environment: environment.rawValue, roots: roots, caFile: caFile,
                    identity: identity, subject: subject))
        }
        findings += await checkFCM(app, directory: directory)
        findings += checkWebPush(app, directory: directory)
        return findings
    }

    static func resolve(_ path: String, in directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }

    /// Token auth: the key file is a P-256 private key, the ids are well formed, and a provider token signed with the
    /// key verifies with its public half.
    func checkToken(teamID: String, keyID: String, keyFile: String, subject: String) -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        if !Self.isAppleID(teamID) {
            findings.append(
                .fail(
                    subject,
                    "team_id \"\(teamID)\" is not 10 characters of A-Z and 0-9: copy the Team ID from the Apple "
                        + "Developer account (Membership details) into the apps file"))
        }
        if !Self.isAppleID(keyID) {
            findings.append(
                .fail(
                    subject,
                    "key_id \"\(keyID)\" is not 10 characters of A-Z and 0-9: copy the Key ID shown with the key in "
                        + "the Apple Developer account (Keys) into the apps file"))
        }
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            let why = FileManager.default.fileExists(atPath: keyFile) ? "is not readable as text" : "does not exist"
            findings.append(
                .fail(subject, "key_file \(keyFile) \(why): fix key_file in the apps file (relative to its directory)"))
            return findings
        }
        let signer: ProviderTokenSigner
        do {
            signer = try ProviderTokenSigner(teamID: teamID, keyID: keyID, pemKey: pem)
        } catch {
            findings.append(
                .fail(
                    subject,
                    "key_file \(keyFile) is not a P-256 private key (PEM \"PRIVATE KEY\"): point key_file at the "
                        + "AuthKey_<key id>.p8 file downloaded from the Apple Developer account (Keys)"))
            return findings
        }
        guard findings.isEmpty else { return findings }
        let now = Int64(deployment.now().timeIntervalSince1970)
        do {
            let token = try signer.makeToken(issuedAt: now)
            let verifier = try ProviderTokenVerifier(keys: [keyID: (teamID, signer.publicKeyPEM)])
            _ = try verifier.verify(token, now: now)
        } catch {
            findings.append(
                .fail(subject, "key_file \(keyFile) cannot sign a provider token that verifies (\(error.message))"))
            return findings
        }
        let name = (keyFile as NSString).lastPathComponent
        if name.hasPrefix("AuthKey_"), name.hasSuffix(".p8"), name != "AuthKey_\(keyID).p8" {
            return [
                .warn(
                    subject,
                    "key_file \(keyFile) is named for another key id than key_id \(keyID): Apple names the file "
                        + "AuthKey_<key id>.p8; check that key_id is this key's")
            ]
        }
        return [
            .pass(
                subject,
                "key_file \(keyFile) is a P-256 key; team \(teamID), key \(keyID); a provider token signs and verifies")
        ]
    }

    /// Apple's team and key ids: 10 characters, A-Z and 0-9.
    static func isAppleID(_ id: String) -> Bool {
        id.utf8.count == 10 && id.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// Certificate auth: the p12 opens with the passphrase from `passphrase_env`, and its certificate is valid now
    /// and for longer than the expiry warning.
    func checkCertificate(
        p12File: String, passphraseEnv: String?, subject: String
    ) -> (DoctorFinding, ClientIdentity?) {
        var passphrase = ""
        if let passphraseEnv {
            guard let value = deployment.environment[passphraseEnv] else {
                return (
                    .fail(
                        subject,
                        "passphrase_env \(passphraseEnv) is not set: export the passphrase of p12_file \(p12File) "
                            + "as \(passphraseEnv)"), nil
                )
            }
            passphrase = value
        }
        guard FileManager.default.isReadableFile(atPath: p12File) else {
            let why = FileManager.default.fileExists(atPath: p12File) ? "is not readable" : "does not exist"
            return (.fail(subject, "p12_file \(p12File) \(why): fix p12_file in the apps file"), nil)
        }
        guard let bundle = try? NIOSSLPKCS12Bundle(file: p12File, passphrase: Array(passphrase.utf8)),
            let leaf = bundle.certificateChain.first
        else {
            let source = passphraseEnv.map { "the passphrase in \($0)" } ?? "an empty passphrase (no passphrase_env)"
            return (
                .fail(
                    subject,
                    "p12_file \(p12File) does not open with \(source): check the passphrase, or export the "
                        + "certificate with its private key again as a .p12"), nil
            )
        }
        let identity = ClientIdentity(chain: bundle.certificateChain, key: bundle.privateKey, file: p12File)
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        let renew = "renew the APNs certificate in the Apple Developer account and export a new p12_file"
        switch DoctorCertificateValidity(
            notBefore: notBefore, notAfter: notAfter, now: deployment.now(), warning: deployment.expiryWarning)
        {
        case .notYetValid:
            return (
                .fail(
                    subject,
                    "the certificate of p12_file \(p12File) is not valid before \(Self.day(notBefore)): check the clock, or use the current certificate"
                ),
                identity
            )
        case .expired:
            return (
                .fail(subject, "the certificate of p12_file \(p12File) expired on \(Self.day(notAfter)): \(renew)"),
                identity
            )
        case .expiresSoon(let days):
            return (
                .warn(
                    subject,
                    "the certificate of p12_file \(p12File) expires on \(Self.day(notAfter)), in \(days) day\(days == 1 ? "" : "s"): \(renew)"
                ),
                identity
            )
        case .valid:
            return (
                .pass(subject, "p12_file \(p12File) opens; its certificate is valid until \(Self.day(notAfter))"),
                identity
            )
        }
    }

    /// `2026-11-21` (UTC).
    static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// Where a certificate stands on its validity period at a given time.
enum DoctorCertificateValidity: Equatable {
    case notYetValid
    case expired
    /// Valid, but expires within the warning; whole days left (at least 0).
    case expiresSoon(days: Int)
    case valid

    init(notBefore: Date, notAfter: Date, now: Date, warning: Duration) {
        if now < notBefore {
            self = .notYetValid
        } else if now >= notAfter {
            self = .expired
        } else if notAfter.timeIntervalSince(now) < TimeInterval(warning.components.seconds) {
            self = .expiresSoon(days: Int(notAfter.timeIntervalSince(now) / 86_400))
        } else {
            self = .valid
        }
    }
}
