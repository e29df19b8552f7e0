import APNSChannels
import HeraldCore

/// Sends a channel broadcast: one request through the app's channel client, answers APNs may take back later
/// (429, 5xx, a connection lost) tried again after each pause of `backoff` in turn (a live update older than that
/// is moot). Returns the last answer; what it means is `ChannelSettlement`'s.
struct ChannelSender: Sendable {
    let clients: BroadcastClients
    let appsDirectory: String
    let clock: HeraldClock
    /// Pauses between tries.
    var backoff: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8)]

    func send(_ request: BroadcastRequest, app: AppConfiguration) async throws -> ChannelAnswer {
        let client = try clients.client(for: app, directory: appsDirectory)
        var tries = 0
        while true {
            let answer: ChannelAnswer
            do {
                answer = .answered(try await client.broadcast(request))
            } catch {
                answer = .failed(
                    reason: error.reason ?? "ConnectionFailed", message: error.message, transient: error.isTransient)
            }
            guard answer.isTransient, tries < backoff.count else { return answer }
            if case .answered = answer { ChannelSettlement.count("retried", reason: answer.reason) }
            try await clock.sleep(backoff[tries])
            tries += 1
        }
    }
}

/// What came back for a broadcast: APNs' answer, or no answer.
enum ChannelAnswer: Sendable, Equatable {
    case answered(BroadcastResult)
    case failed(reason: String, message: String, transient: Bool)

    /// Whether the same broadcast may succeed later.
    var isTransient: Bool {
        switch self {
        case .answered(let result): result.isTransient
        case .failed(_, _, let transient): transient
        }
    }

    /// APNs' reason, or the failure's.
    var reason: String {
        switch self {
        case .answered(let result): result.reason ?? "status \(result.status)"
        case .failed(let reason, _, _): reason
        }
    }
}
