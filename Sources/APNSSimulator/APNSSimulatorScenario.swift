import Foundation

/// The faults and token fates of a simulator run, as a JSON file can give them (`herald apns-sim --scenario`).
///
/// Every field is optional; ``APNSSimulatorConfiguration/apply(_:)`` overrides only those present. Example:
///
/// ```json
/// {
///   "deadTokenPrefixes": ["dead"],
///   "injectedFailures": [{"status": 503, "reason": "ServiceUnavailable", "every": 10}],
///   "goAwayAfterStreams": 500,
///   "responseDelayMilliseconds": 5,
///   "maxConcurrentStreamsUntilAuthenticated": 1
/// }
/// ```
public struct APNSSimulatorScenario: Sendable, Hashable, Codable {
    public var topics: Set<String>?
    public var deadTokens: Set<String>?
    public var deadTokenPrefixes: [String]?
    public var deadTimestamp: Int64?
    public var badTokenPrefixes: [String]?
    public var maxConcurrentStreams: Int?
    public var minimumTokenUpdateIntervalSeconds: Int64?
    public var injectedFailures: [InjectedFailure]?
    public var goAwayAfterStreams: Int?
    public var dropConnectionAfterStreams: Int?
    public var silentTokenPrefixes: [String]?
    public var responseDelayMilliseconds: Int?
    public var maxConcurrentStreamsUntilAuthenticated: Int?
    public var maximumChannelsPerApp: Int?
    public var broadcastDisabledBundles: Set<String>?

    public init() {}

    /// Reads a scenario from a JSON file.
    public init(contentsOfFile path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        self = try JSONDecoder().decode(Self.self, from: data)
    }
}

extension APNSSimulatorConfiguration {
    /// Overrides the fields the scenario sets.
    public mutating func apply(_ scenario: APNSSimulatorScenario) {
        if let value = scenario.topics { topics = value }
        if let value = scenario.deadTokens { deadTokens = value }
        if let value = scenario.deadTokenPrefixes { deadTokenPrefixes = value }
        if let value = scenario.deadTimestamp { deadTimestamp = value }
        if let value = scenario.badTokenPrefixes { badTokenPrefixes = value }
        if let value = scenario.maxConcurrentStreams { maxConcurrentStreams = value }
        if let value = scenario.minimumTokenUpdateIntervalSeconds { minimumTokenUpdateInterval = value }
        if let value = scenario.injectedFailures { injectedFailures = value }
        if let value = scenario.goAwayAfterStreams { goAwayAfterStreams = value }
        if let value = scenario.dropConnectionAfterStreams { dropConnectionAfterStreams = value }
        if let value = scenario.silentTokenPrefixes { silentTokenPrefixes = value }
        if let value = scenario.responseDelayMilliseconds { responseDelay = .milliseconds(value) }
        if let value = scenario.maxConcurrentStreamsUntilAuthenticated {
            maxConcurrentStreamsUntilAuthenticated = value
        }
        if let value = scenario.maximumChannelsPerApp { maximumChannelsPerApp = value }
        if let value = scenario.broadcastDisabledBundles { broadcastDisabledBundles = value }
    }
}
