import Testing

/// The ways a service account's assertion goes wrong, with the answer Google's token endpoint gives each.
enum BadAssertion: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case signedWithAnotherKey
    case unknownIssuer
    case noKeyID
    case anotherKeyID
    case notRS256
    case notAJWT
    case wrongAudience
    case longerThanAnHour
    case issuedInTheFuture
    case expired
    case noScope
    case noMessagingScope

    var testDescription: String { rawValue }

    func assertion(audience: String, now: Int64) -> String {
        let account = TestServiceAccount.main
        switch self {
        case .signedWithAnotherKey:
            return account.assertion(audience: audience, issuedAt: now, signingKey: TestServiceAccount.strangerKey)
        case .unknownIssuer:
            return account.assertion(
                audience: audience, issuedAt: now, issuer: "nobody@demo-project.iam.gserviceaccount.com")
        case .noKeyID: return account.assertion(audience: audience, issuedAt: now, omitKeyID: true)
        case .anotherKeyID: return account.assertion(audience: audience, issuedAt: now, keyID: "key-9")
        case .notRS256: return account.assertion(audience: audience, issuedAt: now, algorithm: "RS384")
        case .notAJWT: return "not-a-jwt"
        case .wrongAudience: return account.assertion(audience: "https://oauth2.googleapis.com/token", issuedAt: now)
        case .longerThanAnHour: return account.assertion(audience: audience, issuedAt: now, expiresAt: now + 3601)
        case .issuedInTheFuture: return account.assertion(audience: audience, issuedAt: now + 61)
        case .expired: return account.assertion(audience: audience, issuedAt: now - 3600, expiresAt: now)
        case .noScope: return account.assertion(audience: audience, issuedAt: now, scope: nil)
        case .noMessagingScope:
            return account.assertion(
                audience: audience, issuedAt: now, scope: "https://www.googleapis.com/auth/userinfo.email")
        }
    }

    var expectedError: String {
        switch self {
        case .noScope, .noMessagingScope: "invalid_scope"
        default: "invalid_grant"
        }
    }

    func expectedBody(audience: String) -> String {
        let description: String
        switch self {
        case .signedWithAnotherKey, .noKeyID, .anotherKeyID, .notRS256, .notAJWT: description = "Invalid JWT Signature."
        case .unknownIssuer: description = "Invalid grant: account not found"
        case .wrongAudience: description = "Invalid JWT: Failed audience check. The right audience is \(audience)"
        case .longerThanAnHour, .issuedInTheFuture, .expired:
            description =
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                + "Check your iat and exp values in the JWT claim."
        case .noScope: description = "Empty or missing scope not allowed."
        case .noMessagingScope: description = "Invalid OAuth scope or ID token audience provided."
        }
        return #"{"error":"\#(expectedError)","error_description":"\#(description)"}"#
    }
}
