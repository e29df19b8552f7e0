import APNSCore
import HeraldCore
import HeraldProducer
import Testing

/// The typed payload builder: Apple's keys, the headers, and validation before anything is published.
@Suite struct PushNotificationTests {
    @Test func theBuilderProducesTheJobNotification() throws {
        let notification = PushNotification.alert(title: "Goal!", body: "2–1")
            .badge(3).sound(.default).threadID("match-42").category("SCORE").mutableContent()
            .interruptionLevel(.timeSensitive).relevanceScore(0.8).custom("match", 42)
            .collapseID("score").priority(.immediate).localized("fr", .alert(title: "But !", body: "2–1"))
        let job = try notification.jobNotification()
        #expect(job.pushType == nil)
        #expect(job.priority == 10)
        #expect(job.collapseID == "score")
        #expect(job.aps["alert"] == .object(["title": "Goal!", "body": "2–1"]))
        #expect(job.aps["badge"] == .integer(3))
        #expect(job.aps["sound"] == .string("default"))
        #expect(job.aps["thread-id"] == .string("match-42"))
        #expect(job.aps["mutable-content"] == .integer(1))
        #expect(job.aps["interruption-level"] == .string("time-sensitive"))
        #expect(job.custom == ["match": .integer(42)])
        #expect(job.localizations?["fr"] == .object(["title": "But !", "body": "2–1"]))
        // The worker accepts what the builder makes.
        _ = try PreparedJob.prepare(Job(app: "a", target: .all, notification: job)) { "id" }
    }

    @Test func backgroundAndLiveActivityNotificationsFollowTheirRules() throws {
        let background = try PushNotification.background().custom("sync", true).jobNotification()
        #expect(background.pushType == "background")
        #expect(background.priority == 5)
        #expect(background.aps == ["content-available": .integer(1)])
        _ = try PreparedJob.prepare(Job(app: "a", target: .all, notification: background)) { "id" }

        let live = try PushNotification.liveActivity(.update, contentState: ["score": "2-1"]).jobNotification()
        #expect(live.pushType == "liveactivity")
        #expect(live.aps["event"] == .string("update"))
        #expect(live.aps["content-state"] == .object(["score": .string("2-1")]))
    }

    @Test(arguments: [
        PushNotification.alert(body: "x").badge(-1),
        PushNotification.alert(body: "x").sound(.critical(.init(name: "alarm", volume: 2))),
        PushNotification.background().badge(1),
        PushNotification.alert(body: String(repeating: "x", count: 5000)),
        PushNotification.alert(body: "x").localized("de", .text(String(repeating: "y", count: 5000))),
        PushNotification(payload: APNSPayload(aps: APS(event: .update)), pushType: .liveactivity),
    ])
    func invalidPayloadsAreRejectedBeforePublishing(_ notification: PushNotification) {
        #expect(throws: ProducerError.self) { try notification.jobNotification() }
        do {
            _ = try notification.jobNotification()
        } catch {
            #expect(error.code == .invalidPayload)
        }
    }
}
