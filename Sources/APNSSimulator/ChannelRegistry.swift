import Foundation

/// A broadcast channel the simulator holds, as `GET /1/apps/<bundle>/channels` describes it.
public struct APNSSimulatorChannel: Sendable, Hashable, Codable {
    /// The channel id: base64 of 16 random bytes, as APNs hands them out.
    public var id: String
    /// The bundle id the channel belongs to.
    public var bundleID: String
    /// `message-storage-policy`: 0 stores no message (broadcasts need `apns-expiration: 0`), 1 stores the latest.
    public var messageStoragePolicy: Int
    /// `push-type`, always `LiveActivity` today.
    public var pushType: String
    /// When it was created, in milliseconds since 1970.
    public var createdAt: Int64

    public init(id: String, bundleID: String, messageStoragePolicy: Int, pushType: String, createdAt: Int64) {
        self.id = id
        self.bundleID = bundleID
        self.messageStoragePolicy = messageStoragePolicy
        self.pushType = pushType
        self.createdAt = createdAt
    }
}

/// The channels of every bundle, in memory, in creation order. A value type behind the simulator's `Mutex`.
struct ChannelRegistry {
    /// What creating a channel did.
    enum CreateResult: Equatable {
        case created(APNSSimulatorChannel)
        /// The bundle already has the maximum number of channels.
        case quotaReached
    }

    private var channels: [String: [APNSSimulatorChannel]] = [:]

    /// Creates a channel with a fresh id unless `bundleID` already has `maximum` channels.
    mutating func create(
        bundleID: String, messageStoragePolicy: Int, pushType: String, maximum: Int, now: Int64
    ) -> CreateResult {
        var list = channels[bundleID, default: []]
        guard list.count < maximum else { return .quotaReached }
        var id = Self.newID()
        while list.contains(where: { $0.id == id }) { id = Self.newID() }
        let channel = APNSSimulatorChannel(
            id: id, bundleID: bundleID, messageStoragePolicy: messageStoragePolicy, pushType: pushType, createdAt: now)
        list.append(channel)
        channels[bundleID] = list
        return .created(channel)
    }

    /// The channel with this id in this bundle (a channel of another bundle is not registered here).
    func channel(_ id: String, bundleID: String) -> APNSSimulatorChannel? {
        channels[bundleID]?.first { $0.id == id }
    }

    /// Removes a channel; false if it was not registered.
    mutating func delete(_ id: String, bundleID: String) -> Bool {
        guard let index = channels[bundleID]?.firstIndex(where: { $0.id == id }) else { return false }
        channels[bundleID]!.remove(at: index)
        return true
    }

    /// The bundle's channels in creation order.
    func list(bundleID: String) -> [APNSSimulatorChannel] {
        channels[bundleID] ?? []
    }

    /// 16 random bytes in standard base64, like the ids APNs returns (e.g. `dHN0LXNyY2gtY2hubA==`).
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
    }
}
