import AsyncHTTPClient
import FCMCore
import Foundation
import HeraldCore
import NIOCore
import NIOSSL

extension Doctor {
    /// An app's `fcm` block: the service account file parses, its key signs (an assertion that verifies with its
    /// public half), an access token is minted at its `token_uri`, and a `validate_only` send of a made-up token
    /// reaches the endpoint and is refused for the token (not for the credentials). Nothing is delivered.
    func checkFCM(_ app: AppConfiguration, directory: String) async -> [DoctorFinding] {
        guard let fcm = app.fcm else { return [] }
        let subject = "app \(app.id)"
        let file = Self.resolve(fcm.serviceAccountFile, in: directory)
        guard let data = FileManager.default.contents(atPath: file) else {
            let why = FileManager.default.fileExists(atPath: file) ? "is not readable" : "does not exist"
            return [
                .fail(
                    subject,
                    "fcm.service_account_file \(file) \(why): download the key from the Firebase console (Project "
                        + "settings, Service accounts) and name it in the apps file")
            ]
        }
        let account: FCMServiceAccount
        do {
            account = try FCMServiceAccount(json: data)
        } catch {
            return [.fail(subject, "fcm.service_account_file \(file) is not a service account key: \(error)")]
        }
        var findings: [DoctorFinding] = []
        let now = Int64(deployment.now().timeIntervalSince1970)
        let assertion: String
        do {
            assertion = try FCMAssertionSigner(account: account).assertion(issuedAt: now)
            _ = try FCMAssertionVerifier(publicKeyPEM: account.publicKeyPEM, keyID: account.privateKeyID)
                .verify(assertion, now: now)
            findings.append(
                .pass(
                    subject,
                    "fcm.service_account_file \(file) holds the key of \(account.clientEmail) "
                        + "(project \(account.projectID)); it signs"))
        } catch {
            return [.fail(subject, "the FCM service account key of \(file) does not sign: \(error)")]
        }

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        if let caFile = fcm.caFile {
            let path = Self.resolve(caFile, in: directory)
            guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
                findings.append(.fail(subject, "fcm.ca_file \(path) holds no PEM certificate: fix it or remove it"))
                return findings
            }
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        // The process's shared client: the doctor runs once and exits.
        let client = HTTPClient.shared
        let timeout = TimeAmount.nanoseconds(Int64(deployment.timeout.components.seconds) * 1_000_000_000)

        // The access token.
        let token: String
        do {
            let form = FCMTokenRequest(account: account, assertion: assertion)
            var request = HTTPClientRequest(url: form.url)
            request.method = .POST
            request.tlsConfiguration = tls
            request.headers.add(name: "content-type", value: FCMTokenRequest.contentType)
            request.body = .bytes(ByteBuffer(bytes: form.body))
            let response = try await client.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: FCMTokenResponse.maximumBodySize)
            token = try FCMTokenResponse(status: Int(response.status.code), body: body.readableBytesView).accessToken
            findings.append(.pass(subject, "an FCM access token was minted at \(account.tokenURI)"))
        } catch {
            findings.append(
                .fail(
                    subject,
                    "no FCM access token from \(account.tokenURI): \(error) (a deleted or disabled key, or a clock "
                        + "more than a few minutes off)"))
            return findings
        }

        // A dry run to a token that cannot exist: FCM checks the credentials and the project, then refuses the token.
        let (host, port) = fcm.hostAndPort
        let authority = port == 443 ? host : "\(host):\(port)"
        var send = HTTPClientRequest(url: "https://\(authority)/v1/projects/\(account.projectID)/messages:send")
        send.method = .POST
        send.tlsConfiguration = tls
        send.headers.add(name: "authorization", value: "Bearer " + token)
        send.headers.add(name: "content-type", value: "application/json")
        let probe = "herald-doctor:" + String(repeating: "0", count: 140)
        send.body = .bytes(
            ByteBuffer(string: #"{"validate_only":true,"message":{"token":"\#(probe)","data":{"herald":"doctor"}}}"#))
        do {
            let response = try await client.execute(send, timeout: timeout)
            let body = try await response.body.collect(upTo: FCMAnswer.maximumBodySize)
            let answer = FCMAnswer(status: Int(response.status.code), body: body.readableBytesView)
            switch answer.status {
            case 200, 400, 404:
                findings.append(
                    .pass(
                        subject,
                        "the FCM endpoint \(authority) takes the credentials for project \(account.projectID) "
                            + "(a validate_only send was answered \(answer.status))"))
            default:
                findings.append(
                    .fail(
                        subject,
                        "the FCM endpoint \(authority) refused a validate_only send: \(answer.status) \(answer.reason) "
                            + "(a project without the FCM API enabled, or a service account without the "
                            + "Firebase Cloud Messaging role)"))
            }
        } catch {
            findings.append(.fail(subject, "the FCM endpoint \(authority) could not be reached: \(error)"))
        }
        return findings
    }
}
