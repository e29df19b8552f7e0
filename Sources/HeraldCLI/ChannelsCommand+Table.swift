import APNSChannels
import Foundation
import HeraldAPI
import HeraldCore
import HeraldStore

/// How `herald channels` prints channels.
enum ChannelTable {
    /// The recorded channels, and with Apple's list each id's side: `both`, `herald only` (Apple no longer has
    /// it) or `apple only` (created outside Herald, or its record was lost).
    static func render(recorded: [ActivityChannel], atApple: [String]?) -> String {
        var header = ["id", "environment", "policy", "label", "ends", "created"]
        var rows = recorded.map { channel in
            [
                channel.id, channel.environment, String(channel.storagePolicy), channel.label ?? "",
                channel.endsAt.map(format) ?? "", format(channel.createdAt),
            ]
        }
        guard let atApple else { return ReportRendering.table(header, rows) }
        header.append("at apple")
        let apple = Set(atApple)
        for (index, channel) in recorded.enumerated() {
            rows[index].append(apple.contains(channel.id) ? "both" : "herald only")
        }
        let known = Set(recorded.map(\.id))
        for id in atApple where !known.contains(id) {
            rows.append([id, "", "", "", "", "", "apple only"])
        }
        return ReportRendering.table(header, rows)
    }

    /// One line: id, environment, policy, label, end.
    static func describe(_ channel: ActivityChannel) -> String {
        var text = "channel \(channel.id): \(channel.environment), storage policy \(channel.storagePolicy)"
        if let label = channel.label { text += ", label \(label)" }
        if let endsAt = channel.endsAt { text += ", ends \(format(endsAt))" }
        return text + ", created \(format(channel.createdAt))"
    }

    static func format(_ date: Date) -> String {
        RFC3339.format(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}
