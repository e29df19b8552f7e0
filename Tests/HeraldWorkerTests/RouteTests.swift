import HeraldCore
import Testing

@testable import HeraldWorker

/// The route a job takes, decided once at intake: every kind of job against the rules, as a table. No services.
@Suite struct RouteTests {
    static let token = String(repeating: "ab", count: 32)

    static func job(target: String, notification: String = #"{"aps":{"alert":"hi"}}"#, extra: String = "") throws
        -> PreparedJob
    {
        try PreparedJob.decode(
            Array(#"{"id":"j","app":"a","target":\#(target),"notification":\#(notification)\#(extra)}"#.utf8)
        ) { "j" }
    }

    static func app(maxPerSecond: Int? = nil, environments: [AppConfiguration.Environment]? = nil)
        -> AppConfiguration
    {
        AppConfiguration(
            id: "a", topic: "a", environment: .production, environments: environments,
            auth: .token(teamID: "T", keyID: "K", keyFile: "k"), maxPerSecond: maxPerSecond)
    }

    static func tokens(_ count: Int) -> String {
        "{\"tokens\":[" + (0..<count).map { "\"\(String(format: "%064x", $0))\"" }.joined(separator: ",") + "]}"
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var job: PreparedJob
        var app: AppConfiguration?
        var route: Route
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        let one = tokens(1)
        let both: [AppConfiguration.Environment] = [.production, .sandbox]
        return try! [
            Case(name: "one token", job: job(target: one), app: app(), route: .smallGroup),
            Case(name: "a batch of tokens", job: job(target: tokens(10)), app: app(), route: .smallGroup),
            Case(name: "more tokens than a batch", job: job(target: tokens(11)), app: app(), route: .planned),
            Case(
                name: "a localized payload",
                job: job(target: one, notification: #"{"aps":{"alert":"hi"},"localizations":{"fr":"salut"}}"#),
                app: app(), route: .oneBatch),
            Case(
                name: "a badge increment",
                job: job(target: one, notification: #"{"aps":{"alert":"hi"},"badge_increment":1}"#), app: app(),
                route: .oneBatch),
            Case(
                name: "scheduled", job: job(target: one, extra: #","send_at":"2100-01-01T00:00:00Z""#), app: app(),
                route: .oneBatch),
            Case(
                name: "a job rate", job: job(target: one, extra: #","throttle_per_second":5"#), app: app(),
                route: .planned),
            Case(name: "an app rate", job: job(target: one), app: app(maxPerSecond: 50), route: .planned),
            Case(
                name: "an app of two environments", job: job(target: one), app: app(environments: both),
                route: .oneBatch),
            Case(name: "users", job: job(target: #"{"users":["u1"]}"#), app: app(), route: .planned),
            Case(name: "a topic", job: job(target: #"{"topic":"news"}"#), app: app(), route: .planned),
            Case(name: "every device", job: job(target: #"{"all":true}"#), app: app(), route: .planned),
            Case(
                name: "a Live Activity update",
                job: job(
                    target: #"{"activity":"order-1"}"#,
                    notification:
                        #"{"push_type":"liveactivity","aps":{"event":"update","content-state":{},"timestamp":1}}"#),
                app: app(), route: .liveActivity),
            Case(
                name: "a Live Activity update to a channel",
                job: job(
                    target: #"{"channel":"dGVzdC1jaGFubmVsLWlkMQ=="}"#,
                    notification:
                        #"{"push_type":"liveactivity","aps":{"event":"update","content-state":{},"timestamp":1}}"#),
                app: app(), route: .channelBroadcast(channel: "dGVzdC1jaGFubmVsLWlkMQ==")),
            Case(
                name: "an app not in the apps file", job: job(target: one), app: nil,
                route: .park(JobError(.unknownApp, "app a is not in the apps file"))),
        ]
    }()

    @Test(arguments: cases) func theRouteIsDecidedOnceAtIntake(_ test: Case) {
        #expect(Route.of(test.job, app: test.app, batchSize: 10) == test.route)
    }

    /// A resolved Live Activity job (its tokens listed) is routed as one batch or planned, never as a group.
    @Test func aResolvedJobIsOneBatchOrPlanned() throws {
        #expect(Route.resolved(try Self.job(target: Self.tokens(3)), app: Self.app(), batchSize: 10) == .oneBatch)
        #expect(Route.resolved(try Self.job(target: Self.tokens(30)), app: Self.app(), batchSize: 10) == .planned)
        #expect(
            Route.resolved(try Self.job(target: Self.tokens(3)), app: Self.app(maxPerSecond: 1), batchSize: 10)
                == .planned)
    }
}
