import Foundation

/// An app's Live Activity settings, the `live_activities` entry of the apps file (docs/live-activities.md).
///
/// Every field is optional; the defaults are Apple's hosts and the rules Herald applies when a job leaves a value
/// out.
public struct LiveActivitySettings: Sendable, Hashable, Codable {
    /// `https://host[:port]` of Apple's channel management API; nil is Apple's host for the app's environment
    /// (`api-manage-broadcast[.sandbox].push.apple.com`, 2196 in production, 2195 in the sandbox).
    public var channelsEndpoint: String?
    /// `https://host[:port]` that broadcast sends (`POST /4/broadcasts/apps/<bundle>`) go to; nil is the app's
    /// ordinary endpoint. Apple's examples and its prose name different hosts, so it is a setting.
    public var broadcastEndpoint: String?
    /// Whether the app declares `NSSupportsLiveActivitiesFrequentUpdates`: its updates then go at priority 10 by
    /// default, within the budget.
    public var frequentUpdates: Bool?
    /// How many priority-10 sends Herald allows one activity (or channel) in an hour before it sends at 5.
    public var priorityBudgetPerHour: Int?
    /// Seconds after an event's timestamp that Herald sets as its `stale-date` when the job gives none.
    public var staleAfterSeconds: Int?
    /// Seconds after an end event's timestamp that Herald sets as its `dismissal-date` when the job gives none.
    public var dismissAfterSeconds: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case channelsEndpoint = "channels_endpoint"
        case broadcastEndpoint = "broadcast_endpoint"
        case frequentUpdates = "frequent_updates"
        case priorityBudgetPerHour = "priority_budget_per_hour"
        case staleAfterSeconds = "stale_after_seconds"
        case dismissAfterSeconds = "dismiss_after_seconds"
    }

    public init(
        channelsEndpoint: String? = nil, broadcastEndpoint: String? = nil, frequentUpdates: Bool? = nil,
        priorityBudgetPerHour: Int? = nil, staleAfterSeconds: Int? = nil, dismissAfterSeconds: Int? = nil
    ) {
        self.channelsEndpoint = channelsEndpoint
        self.broadcastEndpoint = broadcastEndpoint
        self.frequentUpdates = frequentUpdates
        self.priorityBudgetPerHour = priorityBudgetPerHour
        self.staleAfterSeconds = staleAfterSeconds
        self.dismissAfterSeconds = dismissAfterSeconds
    }

    /// Priority-10 sends per activity and hour when the app sets none. Apple publishes no number; this one keeps
    /// an activity that updates every few minutes at 5 for most of its updates.
    public static let defaultPriorityBudgetPerHour = 10
    /// With frequent updates declared, Apple allows an activity more priority-10 updates.
    public static let defaultFrequentPriorityBudgetPerHour = 60
    /// Eight hours: the longest a Live Activity stays active on the device.
    public static let defaultStaleAfterSeconds = 8 * 3600
    /// A quarter of an hour on the Lock Screen after the end (iOS keeps it up to four hours when none is given).
    public static let defaultDismissAfterSeconds = 15 * 60

    /// The budget in force.
    public var effectivePriorityBudgetPerHour: Int {
        priorityBudgetPerHour
            ?? (frequentUpdates == true
                ? Self.defaultFrequentPriorityBudgetPerHour : Self.defaultPriorityBudgetPerHour)
    }

    /// Checks the values' bounds.
    func check(app: String) throws(ConfigurationError) {
        if let budget = priorityBudgetPerHour, !(0...3600).contains(budget) {
            throw ConfigurationError("app \(app): live_activities.priority_budget_per_hour must be 0 to 3600")
        }
        if let seconds = staleAfterSeconds, !(1...86_400 * 7).contains(seconds) {
            throw ConfigurationError("app \(app): live_activities.stale_after_seconds must be 1 to 604800")
        }
        if let seconds = dismissAfterSeconds, !(0...86_400).contains(seconds) {
            throw ConfigurationError("app \(app): live_activities.dismiss_after_seconds must be 0 to 86400")
        }
        for (name, url) in [("channels_endpoint", channelsEndpoint), ("broadcast_endpoint", broadcastEndpoint)] {
            guard let url else { continue }
            _ = try Self.hostAndPort(url, app: app, field: name)
        }
    }

    /// The host and port of an `https://host[:port]` setting.
    static func hostAndPort(_ url: String, app: String, field: String) throws(ConfigurationError) -> (
        host: String, port: Int
    ) {
        guard let components = URLComponents(string: url), components.scheme == "https",
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil
        else {
            throw ConfigurationError("app \(app): live_activities.\(field) must be an https:// URL with a host")
        }
        return (host, components.port ?? 443)
    }
}

extension AppConfiguration {
    /// The Live Activity settings, defaults where the apps file has none.
    public var liveActivitySettings: LiveActivitySettings { liveActivities ?? LiveActivitySettings() }

    /// Where channel management requests go: `live_activities.channels_endpoint`, else Apple's host for the app's
    /// environment.
    public func channelsEndpoint() throws(ConfigurationError) -> (host: String, port: Int) {
        if let url = liveActivities?.channelsEndpoint {
            return try LiveActivitySettings.hostAndPort(url, app: id, field: "channels_endpoint")
        }
        return environment == .production
            ? ("api-manage-broadcast.push.apple.com", 2196) : ("api-manage-broadcast.sandbox.push.apple.com", 2195)
    }

    /// Where broadcast sends go: `live_activities.broadcast_endpoint`, else the app's ordinary endpoint.
    public func broadcastEndpoint() throws(ConfigurationError) -> (host: String, port: Int) {
        if let url = liveActivities?.broadcastEndpoint {
            return try LiveActivitySettings.hostAndPort(url, app: id, field: "broadcast_endpoint")
        }
        return try resolvedEndpoint()
    }
}
