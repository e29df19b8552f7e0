import Foundation
import Testing

/// The test tiers the build knows. `make unit` runs the no-services tier (`HERALD_TEST_TIER=unit`): pure tests and
/// loopback tests against Herald's own simulators, on a machine with no PostgreSQL and no RabbitMQ. `make test`
/// runs every tier against the dev services it starts.
public enum TestTier: String, Sendable {
    /// Pure and loopback tests only.
    case unit
    /// Everything, the dev services included (the default).
    case all

    /// The tier this run asked for: `HERALD_TEST_TIER`, else every tier.
    public static var current: TestTier {
        ProcessInfo.processInfo.environment["HERALD_TEST_TIER"].flatMap(TestTier.init(rawValue:)) ?? .all
    }
}

extension Trait where Self == ConditionTrait {
    /// The suite or test needs the dev PostgreSQL or RabbitMQ (`make test` starts them): skipped in the no-services
    /// tier (`make unit`).
    public static var needsServices: Self {
        .disabled(if: TestTier.current == .unit, "needs PostgreSQL or RabbitMQ (make test starts them)")
    }
}
