/// A refusal of the token endpoint: status 400 and `{"error": …, "error_description": …}`.
struct OAuthRejection: Error, Sendable, Hashable {
    var error: String
    var description: String

    /// The answer carrying it.
    var answer: Answer { .oauth(400, error: error, description: description) }

    /// A wrong, deleted or disabled key, or an assertion that is not a well-formed RS256 JWT.
    static let invalidSignature = OAuthRejection(error: "invalid_grant", description: "Invalid JWT Signature.")

    /// `iss` names no known service account.
    static let accountNotFound = OAuthRejection(error: "invalid_grant", description: "Invalid grant: account not found")

    /// `iat`/`exp` missing, skewed, or further apart than an hour.
    static let badTimeframe = OAuthRejection(
        error: "invalid_grant",
        description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
            + "Check your iat and exp values in the JWT claim.")

    /// `aud` is not the endpoint's URL.
    static func badAudience(_ audience: String) -> OAuthRejection {
        OAuthRejection(
            error: "invalid_grant", description: "Invalid JWT: Failed audience check. The right audience is \(audience)"
        )
    }

    /// No `scope` claim.
    static let missingScope = OAuthRejection(error: "invalid_scope", description: "Empty or missing scope not allowed.")

    /// No scope that grants FCM.
    static let invalidScope = OAuthRejection(
        error: "invalid_scope", description: "Invalid OAuth scope or ID token audience provided.")
}
