import HeraldCommandLine
import HeraldMessaging

extension Topology {
    /// The queues the resolved `queue.*` keys name (each was checked against its rule when resolved).
    init(_ settings: ResolvedConfiguration) {
        self.init(
            prefix: settings.requiredText(.queuePrefix),
            queueType: QueueType(rawValue: settings.requiredText(.queueType)) ?? .classic,
            retryDelays: settings.durations(.retryDelays))
    }
}
