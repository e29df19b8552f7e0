import APNSCore
import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldProducer
import RabbitMQ

/// `herald publish`: one job from flags, or many from a JSON-lines file, each with a broker confirm.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a notification job (from flags, or one job per line with --file) with broker confirms.",
        discussion: """
            herald publish --app com.example.news --topic sports --title "Goal!" --alert "2–1" --badge 1
            herald publish --file jobs.jsonl      (bad lines are reported with their line number and skipped)
            """
    )

    @OptionGroup var services: ServiceOptions

    @Option(help: "The app (with --file: the app of lines that name none).")
    var app: String?

    @Option(name: .customLong("token"), help: "A device token (repeatable).")
    var tokens: [String] = []

    @Option(name: .customLong("user"), help: "A user id (repeatable).")
    var users: [String] = []

    @Option(help: "A topic (segment).")
    var topic: String?

    @Flag(help: "Every device of the app.")
    var all = false

    @Option(help: "The alert body.")
    var alert: String?

    @Option(help: "The alert title.")
    var title: String?

    @Option(help: "The badge number (0 removes it).")
    var badge: Int?

    @Option(help: "A sound name ('default' for the system sound).")
    var sound: String?

    @Option(help: "apns-push-type: alert, background, voip, …")
    var pushType: String = "alert"

    @Option(help: "apns-priority: 10, 5 or 1.")
    var priority: Int?

    @Option(help: "apns-collapse-id.")
    var collapseID: String?

    @Option(help: "When to send: RFC 3339, e.g. 2026-12-24T18:00:00Z.")
    var sendAt: String?

    @Option(help: "The job id (idempotency key); generated if absent.")
    var id: String?

    @Option(help: "A JSON-lines file of jobs ('-' for standard input).")
    var file: String?

    @OptionGroup var queues: QueueOptions

    @OptionGroup var appsFile: AppsFileOptions

    @Option(help: "Publishes awaiting their confirm at once (with --file).")
    var concurrency: Int = 64

    func validate() throws {
        if file != nil {
            guard tokens.isEmpty, users.isEmpty, topic == nil, !all, alert == nil, title == nil else {
                throw ValidationError("--file takes whole jobs; use --app alone for lines without an app")
            }
            return
        }
        guard app != nil else { throw ValidationError("--app is required") }
        let targets = [!tokens.isEmpty, !users.isEmpty, topic != nil, all].filter { $0 }.count
        guard targets == 1 else { throw ValidationError("give exactly one of --token, --user, --topic, --all") }
        guard concurrency > 0 else { throw ValidationError("--concurrency must be positive") }
        if pushType == "alert", alert == nil, title == nil, badge == nil, sound == nil {
            throw ValidationError("an alert needs --alert (or --title, --badge, --sound)")
        }
    }

    func run() async throws {
        let logger = services.makeLogger(label: "herald.publish")
        let known = try KnownApps(services.resolve([.appsFile], with: [appsFile]))
        if file == nil, let app { try known.check(app) }
        let producer = Producer(
            configuration: ProducerConfiguration(
                amqp: try AMQPConfiguration(url: services.resolvedAMQPURL()),
                queue: Topology(try services.resolve(QueueOptions.keys, with: [queues])).jobs
            ),
            logger: logger
        )
        do {
            if let file {
                try await publishFile(file, producer: producer, known: known)
            } else {
                try await publishOne(producer: producer)
            }
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }

    func notification() throws -> PushNotification {
        var aps = APS()
        if alert != nil || title != nil {
            aps.alert = title == nil ? .text(alert ?? "") : .alert(title: title, body: alert)
        }
        aps.badge = badge
        aps.sound = sound.map(APNSSound.named)
        let type = PushType(rawValue: pushType)
        guard type.isKnown else { throw ValidationError("--push-type \(pushType) is not an APNs push type") }
        if type == .background { aps.contentAvailable = true }
        return PushNotification(
            payload: APNSPayload(aps: aps),
            pushType: type,
            priority: priority.map(Priority.init(rawValue:)) ?? (type == .background ? .conservePower : nil),
            collapseID: collapseID
        )
    }

    func publishOne(producer: Producer) async throws {
        let target: Target =
            !tokens.isEmpty ? .tokens(tokens) : !users.isEmpty ? .users(users) : topic.map(Target.topic) ?? .all
        let job = Job(
            id: id, app: app ?? "", target: target, notification: try notification().jobNotification(), sendAt: sendAt
        )
        let published = try await producer.publish(job)
        if published.invalidTokenCount > 0 {
            FileHandle.standardError.write(
                Data("\(published.invalidTokenCount) tokens are not device tokens and will fail\n".utf8))
        }
        print("published job \(published.id)")
    }

    func publishFile(_ path: String, producer: Producer, known: KnownApps) async throws {
        var lines = try LineReader(path: path)
        let defaultApp = app
        var lineNumber = 0
        var published = 0
        var rejected: [String] = []
        var failed = 0
        try await withThrowingTaskGroup(of: Bool.self) { group in
            var inFlight = 0
            while let line = lines.next() {
                lineNumber += 1
                if line.allSatisfy(\.isWhitespace) { continue }
                let prepared: PreparedJob
                do {
                    prepared = try Self.prepare(line, defaultApp: defaultApp)
                } catch {
                    rejected.append("line \(lineNumber): \(error)")
                    continue
                }
                if let problem = known.problem(with: prepared.app) {
                    rejected.append("line \(lineNumber): \(problem)")
                    continue
                }
                if inFlight >= concurrency, let ok = try await group.next() {
                    inFlight -= 1
                    if ok { published += 1 } else { failed += 1 }
                    if ok && published % 1000 == 0 {
                        FileHandle.standardError.write(Data("published \(published) jobs…\n".utf8))
                    }
                }
                let number = lineNumber
                group.addTask {
                    do {
                        try await producer.publish(prepared)
                        return true
                    } catch {
                        FileHandle.standardError.write(Data("line \(number): \(error)\n".utf8))
                        return false
                    }
                }
                inFlight += 1
            }
            for try await ok in group {
                if ok { published += 1 } else { failed += 1 }
            }
        }
        for message in rejected.prefix(100) {
            FileHandle.standardError.write(Data("rejected \(message)\n".utf8))
        }
        if rejected.count > 100 {
            FileHandle.standardError.write(Data("… and \(rejected.count - 100) more rejected lines\n".utf8))
        }
        var summary = "publish: \(published) published, \(rejected.count) rejected"
        if failed > 0 { summary += ", \(failed) not confirmed" }
        print(summary)
        if failed > 0 { throw ExitCode(1) }
    }

    /// Decodes and validates one line; a line without an app takes `defaultApp`.
    static func prepare(_ line: String, defaultApp: String?) throws(JobError) -> PreparedJob {
        var body = Array(line.utf8)
        if let defaultApp,
            var object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body)), object["app"] == nil
        {
            object["app"] = .string(defaultApp)
            if let encoded = try? JSONEncoder().encode(object) { body = Array(encoded) }
        }
        return try PreparedJob.decode(body) { UUID().uuidString.lowercased() }
    }
}
