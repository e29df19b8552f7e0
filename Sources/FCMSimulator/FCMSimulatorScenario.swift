import Foundation

/// The faults and token fates of a simulator run, as a JSON file can give them.
///
/// Every field is optional; ``FCMSimulatorConfiguration/apply(_:)`` overrides only those present. Example:
///
/// ```json
/// {
///   "deadTokenPrefixes": ["dead"],
///   "injectedFailures": [{"status": 503, "every": 10, "retryAfter": 2}],
///   "dropConnectionAfterRequests": 500,
///   "responseDelayMilliseconds": 5
/// }
/// ```
public struct FCMSimulatorScenario: Sendable, Hashable, Codable {
    /// Overrides ``FCMSimulatorConfiguration/deadTokens``.
    public var deadTokens: Set<String>?
    /// Overrides ``FCMSimulatorConfiguration/deadTokenPrefixes``.
    public var deadTokenPrefixes: [String]?
    /// Overrides ``FCMSimulatorConfiguration/foreignTokenPrefixes``.
    public var foreignTokenPrefixes: [String]?
    /// Overrides ``FCMSimulatorConfiguration/thirdPartyAuthErrorPrefixes``.
    public var thirdPartyAuthErrorPrefixes: [String]?
    /// Overrides ``FCMSimulatorConfiguration/injectedFailures``.
    public var injectedFailures: [FCMInjectedFailure]?
    /// Overrides ``FCMSimulatorConfiguration/maxConcurrentStreams``.
    public var maxConcurrentStreams: Int?
    /// Overrides ``FCMSimulatorConfiguration/accessTokenLifetime``.
    public var accessTokenLifetime: Int64?
    /// Overrides ``FCMSimulatorConfiguration/dropConnectionAfterRequests``.
    public var dropConnectionAfterRequests: Int?
    /// Overrides ``FCMSimulatorConfiguration/responseDelay`` (milliseconds).
    public var responseDelayMilliseconds: Int?

    /// An empty scenario: applying it changes nothing.
    public init() {}

    /// Reads a scenario from a JSON file.
    public init(contentsOfFile path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        self = try JSONDecoder().decode(Self.self, from: data)
    }
}

extension FCMSimulatorConfiguration {
    /// Overrides the fields the scenario sets.
    public mutating func apply(_ scenario: FCMSimulatorScenario) {
        if let value = scenario.deadTokens { deadTokens = value }
        if let value = scenario.deadTokenPrefixes { deadTokenPrefixes = value }
        if let value = scenario.foreignTokenPrefixes { foreignTokenPrefixes = value }
        if let value = scenario.thirdPartyAuthErrorPrefixes { thirdPartyAuthErrorPrefixes = value }
        if let value = scenario.injectedFailures { injectedFailures = value }
        if let value = scenario.maxConcurrentStreams { maxConcurrentStreams = value }
        if let value = scenario.accessTokenLifetime { accessTokenLifetime = value }
        if let value = scenario.dropConnectionAfterRequests { dropConnectionAfterRequests = value }
        if let value = scenario.responseDelayMilliseconds { responseDelay = .milliseconds(value) }
    }
}
