import APNSCore
import HeraldCore
import HeraldStore

/// What a delivery run needs of PostgreSQL to prepare its units, and nothing more: `Store` is it; the run's fast
/// tests (`DeliveryRunTests`) use a fake.
protocol DeliveryStore: Sendable {
    func beginBatch(_ key: BatchKey) async throws -> BatchStart
    func hasUnprovenDevices(app: String) async throws -> Bool
    func devices(app: String, tokens: [DeviceToken]) async throws -> [StoredDevice]
    func devicesPage(
        app: String, filter: DeviceFilter, after: String?, through: String?, limit: Int, withDetails: Bool,
        withSubscriptions: Bool
    ) async throws -> [StoredDevice]
    func takeTurn(job: JobKey, count: Int, jobRate: Int?, appRate: Int?, within window: Duration) async throws
        -> ThrottleSlot
    func incrementBadges(job: JobKey, tokens: [DeviceToken], by increment: Int) async throws -> [String: Int]
    func pruneBreakerCounts(_ job: JobKey) async throws -> (answers: Int, suspect: Int)
    func unprovenDevices(app: String, tokens: [DeviceToken]) async throws -> Set<String>
}

extension Store: DeliveryStore {}
