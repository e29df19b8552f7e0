import APNSCore
import APNSSimulator
import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import RabbitMQ

/// The demo's Live Activity: one delivery tracked from its start to its end on the first demo device, through the
/// same worker (docs/live-activities.md).
struct DemoLiveActivity {
    static let activityType = "DeliveryAttributes"

    let app: String
    let device: DeviceToken
    let store: Store
    let connection: AMQPConnection
    let topology: Topology
    let simulator: APNSSimulator

    struct Outcome {
        var lines: [String] = []
        var problems: [String] = []
    }

    func run() async throws -> Outcome {
        var outcome = Outcome()
        let run = UUID().uuidString.lowercased().prefix(8)
        let activity = "demo-order-\(run)"
        let startToken = try DeviceToken(parsing: "5a" + String(repeating: "0", count: 61) + "1")
        let updateToken = try DeviceToken(parsing: "0a" + String(repeating: "0", count: 61) + "1")

        // What the app does: registers its push-to-start token, then (once the activity runs) its update token.
        _ = try await store.registerStartToken(
            app: app, device: device, activityType: Self.activityType, token: startToken, registeredBy: nil)
        let steps: [(event: String, id: String, state: String)] = [
            ("start", "demo-\(run)-activity-start", "preparing"),
            ("update", "demo-\(run)-activity-update", "on its way"),
            ("end", "demo-\(run)-activity-end", "delivered"),
        ]
        for step in steps {
            if step.event == "update" {
                _ = try await store.registerUpdateToken(
                    app: app, activityID: activity, device: device, token: updateToken, registeredBy: nil)
            }
            var aps: [String: JSONValue] = [
                "event": .string(step.event), "content-state": .object(["status": .string(step.state)]),
            ]
            let target: Target
            if step.event == "start" {
                aps["attributes-type"] = .string(Self.activityType)
                aps["attributes"] = .object(["order": .string(activity)])
                aps["alert"] = .object(["title": "Herald demo", "body": "Your order is being prepared"])
                target = .tokens([device.hex])
            } else {
                target = .activity(activity)
            }
            let job = Job(
                id: step.id, app: app, target: target,
                notification: JobNotification(pushType: "liveactivity", aps: aps))
            let before = simulator.records.count
            try await connection.publish(
                Array(try JSONEncoder().encode(job)), routingKey: topology.jobs,
                properties: AMQPProperties(
                    contentType: "application/json", messageID: step.id,
                    timestamp: HeraldClock.system.unixSeconds, priority: job.brokerPriority(bulk: false)))
            let state = try await waitUntilFinal(step.id)
            let sent = simulator.records.dropFirst(before).filter { $0.pushType == "liveactivity" }
            let expected = step.event == "start" ? startToken.hex : updateToken.hex
            guard state == .done, sent.count == 1, let record = sent.first, record.token == expected,
                let aps = Self.aps(record.payload), aps["event"] as? String == step.event
            else {
                outcome.problems.append("live activity \(step.event): state \(state.rawValue), \(sent.count) sent")
                continue
            }
            var line =
                "live activity \(step.event): sent at priority \(record.priority), timestamp \(aps["timestamp"] ?? "-")"
            if let stale = aps["stale-date"] { line += ", stale-date \(stale)" }
            if let dismissal = aps["dismissal-date"] {
                line += ", dismissal-date \(dismissal)"
            } else if step.event == "end" {
                outcome.problems.append("live activity end: no dismissal-date")
            }
            outcome.lines.append(line)
        }
        let left = try await store.updateTokens(app: app, activityID: activity, limit: 10).entries.count
        if left != 0 { outcome.problems.append("live activity: \(left) update tokens left after its end") }
        _ = try await store.deleteStartToken(app: app, device: device, activityType: Self.activityType)
        return outcome
    }

    /// Polls the job's state until it is final (a demo, not a test: bounded at 30 s).
    private func waitUntilFinal(_ id: String) async throws -> JobState {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let state = try await store.job(app: app, id: id)?.state, state.isFinal { return state }
            try await HeraldClock.system.sleep(.milliseconds(100))
        }
        return .running
    }

    static func aps(_ payload: String) -> [String: Any]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any] else {
            return nil
        }
        return object["aps"] as? [String: Any]
    }
}
