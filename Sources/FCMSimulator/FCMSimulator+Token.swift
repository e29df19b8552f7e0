import Crypto
import Foundation

extension FCMSimulator {
    /// The grant type of a service account's signed assertion.
    static let jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// `POST <tokenPath>`: verifies the assertion and mints an access token.
    func answerToken(_ request: ReceivedRequest, now: Int64) -> Answer {
        guard request.method == .POST else { return .methodNotAllowed }
        guard request.bodySize <= Self.bodyLimit else {
            return .oauth(413, error: "invalid_request", description: "Request body too large.")
        }
        let contentType = request.headers.first(name: "content-type")?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            return OAuthRejection(error: "invalid_request", description: "Invalid Content-Type.").answer
        }
        guard let form = FormBody.parse(request.body) else {
            return OAuthRejection(error: "invalid_request", description: "Invalid request body.").answer
        }
        guard let grantType = form["grant_type"] else {
            return OAuthRejection(error: "invalid_request", description: "Missing required parameter: grant_type")
                .answer
        }
        guard grantType == Self.jwtBearerGrantType else {
            return OAuthRejection(
                error: "unsupported_grant_type", description: "Invalid grant_type: \(SchemaCheck.bounded(grantType))"
            ).answer
        }
        guard let assertion = form["assertion"] else {
            return OAuthRejection(error: "invalid_request", description: "Missing required parameter: assertion")
                .answer
        }
        guard let verifier = try? verifier.get() else { return .oauth(500, error: "internal_failure", description: "") }
        let clientEmail: String
        do {
            clientEmail = try verifier.verify(assertion, audience: tokenAudience, now: now)
        } catch {
            return error.answer
        }
        let accessToken = "ya29." + Self.randomToken()
        let lifetime = configuration.accessTokenLifetime
        state.withLock { $0.mint(accessToken, for: clientEmail, expiresAt: now + lifetime, now: now) }
        return .json(
            200,
            .object([
                "access_token": .string(accessToken), "expires_in": .number(String(lifetime)),
                "token_type": .string("Bearer"),
            ]))
    }

    /// 32 random bytes in base64url: the secret part of an access token.
    private static func randomToken() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
