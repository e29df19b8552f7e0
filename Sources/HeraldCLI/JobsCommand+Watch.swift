import ArgumentParser
import Foundation
import HeraldCommandLine
import HeraldCore
import HeraldStore

/// `herald jobs watch ID [--app A]`: the job's progress, refreshed until it ends.
struct WatchJob: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow a job until it ends: targeted, sent, pruned, failed, share settled, rate and ETA.",
        discussion: """
            Prints a line whenever the job's counters change (at most once per --interval), then a summary when it \
            ends. Exits 0 when the job is done, 1 when it failed or was cancelled. With --app, a job not in the \
            database yet (published, not yet taken by a worker) is waited for, up to --wait seconds.
              herald publish --app com.example.news --all --alert hi --id evening && \\
                herald jobs watch evening --app com.example.news
            """
    )

    @OptionGroup var services: ServiceOptions
    @OptionGroup var job: JobSelection

    @Option(help: "Seconds between refreshes.")
    var interval: Double = 1

    @Option(help: "With --app: seconds to wait for a job that is not in the database yet.")
    var wait: Double = 60

    func validate() throws {
        guard interval >= 0.05, interval <= 3600 else { throw ValidationError("--interval must be 0.05 to 3600") }
        guard wait >= 0, wait <= 86_400 else { throw ValidationError("--wait must be 0 to 86400") }
    }

    func run() async throws {
        let logger = services.makeLogger(label: "herald.jobs")
        let database = try DatabaseConfiguration(url: services.resolvedDatabaseURL())
        let (selection, interval, wait) = (self.job, self.interval, self.wait)
        let final = try await withStore(database, logger: logger) { store in
            let key = try await Self.awaitJob(selection, in: store, wait: wait, interval: interval)
            var rate = JobRate()
            var last = ""
            while true {
                guard let progress = try await store.jobProgress(app: key.app, id: key.id) else {
                    throw ValidationError("job \(key.id) of app \(key.app) is gone (retention deleted it)")
                }
                rate.record(settled: progress.settled, at: .now)
                if progress.status.state.isFinal { return progress }
                let line = JobProgressText.line(progress, perSecond: rate.perSecond ?? progress.averageRate)
                if line != last {
                    Self.say(line)
                    last = line
                }
                try await HeraldClock.system.sleep(.milliseconds(Int(interval * 1000)))
            }
        }
        Self.say(JobProgressText.summary(final))
        if final.status.state != .done { throw ExitCode(1) }
    }

    /// The job's key once it is in the database: at once without `--app` (as `jobs show`), else waiting up to
    /// `wait` seconds for a job published but not yet taken by a worker.
    static func awaitJob(
        _ selection: JobSelection, in store: Store, wait: Double, interval: Double
    ) async throws -> JobKey {
        guard let app = selection.app else { return try await selection.resolve(in: store).key }
        let deadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        var said = false
        while try await store.job(app: app, id: selection.id) == nil {
            guard ContinuousClock.now < deadline else {
                throw ValidationError("app \(app) has no job with id \(selection.id) (waited \(Int(wait)) s)")
            }
            if !said {
                say("waiting for job \(selection.id) of app \(app) to reach a worker…")
                said = true
            }
            try await HeraldClock.system.sleep(.milliseconds(Int(min(interval, 1) * 1000)))
        }
        return JobKey(app: app, id: selection.id)
    }

    /// Prints a line at once, also into a pipe (scripts and tests read it as it comes).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// The settle rate over the last few seconds of observations.
struct JobRate {
    private var samples: [(at: ContinuousClock.Instant, settled: Int)] = []
    /// How far back the rate looks.
    static let window: Duration = .seconds(10)

    mutating func record(settled: Int, at now: ContinuousClock.Instant) {
        samples.append((now, settled))
        while samples.count > 2, let first = samples.first, first.at.duration(to: now) > Self.window {
            samples.removeFirst()
        }
    }

    /// Notifications settled per second between the oldest and newest observation; nil before two.
    var perSecond: Double? {
        guard let first = samples.first, let last = samples.last, samples.count > 1 else { return nil }
        let span = first.at.duration(to: last.at)
        let seconds = Double(span.components.seconds) + Double(span.components.attoseconds) * 1e-18
        guard seconds > 0 else { return nil }
        return Double(last.settled - first.settled) / seconds
    }
}

extension JobProgress {
    /// Settled per second since the job started; nil before it starts.
    var averageRate: Double? {
        guard let seconds = secondsRunning, seconds > 0 else { return nil }
        return Double(settled) / seconds
    }
}

/// How `herald jobs show` and `herald jobs watch` put a job's progress in words.
enum JobProgressText {
    /// One line of `jobs watch`: `running 60.0% (1200 of 2000 settled) sent 1197 pruned 3 failed 0 expired 0 …`.
    static func line(_ progress: JobProgress, perSecond: Double?) -> String {
        let status = progress.status
        let c = status.counters
        switch status.state {
        case .queued: return "queued: waiting for a worker"
        case .scheduled: return "scheduled: waiting for its send time"
        default: break
        }
        var parts = [status.state.rawValue]
        if progress.planned {
            parts.append(percentText(progress) + " (\(progress.settled) of \(c.targeted) settled)")
        } else {
            parts.append("planning (\(c.targeted) targeted so far, \(progress.settled) settled)")
        }
        parts.append("sent \(c.sent), pruned \(c.pruned), failed \(c.failed), expired \(c.expired)")
        if c.retried > 0 { parts.append("retried \(c.retried)") }
        if let perSecond { parts.append(String(format: "%.0f/s", perSecond)) }
        if !progress.planned {
            parts.append("ETA once planned")
        } else if let perSecond, perSecond > 0 {
            parts.append("ETA " + duration(Double(max(0, c.targeted - progress.settled)) / perSecond))
        } else {
            parts.append("ETA unknown")
        }
        return parts.joined(separator: "  ")
    }

    /// The share settled, `60.0%`, or `-` while nothing is targeted.
    static func percentText(_ progress: JobProgress) -> String {
        progress.percent.map { String(format: "%.1f%%", $0) } ?? "-"
    }

    /// The line a finished job ends `jobs watch` with.
    static func summary(_ progress: JobProgress) -> String {
        let status = progress.status
        let c = status.counters
        let took = progress.secondsRunning.map { " in " + duration($0) } ?? ""
        var text =
            "job \(status.id) of app \(status.app) \(status.state.rawValue)\(took): \(c.targeted) targeted, "
            + "\(c.sent) sent, \(c.pruned) pruned, \(c.failed) failed, \(c.expired) expired"
        if let error = status.error { text += "; error: \(error)" }
        return text
    }

    /// `jobs show`'s progress line.
    static func showLine(_ progress: JobProgress) -> String {
        let targeted = progress.status.counters.targeted
        let planning =
            progress.planned ? "planning done" : "still planning: the number targeted grows until it is done"
        return "progress: \(percentText(progress)) settled (\(progress.settled) of \(targeted) targeted; \(planning))"
    }

    /// `45s`, `3m05s`, `2h10m`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "unknown" }
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }
}
