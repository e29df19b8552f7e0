import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldCLI
@testable import HeraldStore

/// Shell completion and man pages come from the command parser, so they know every subcommand and flag.
@Suite struct CompletionAndManTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func theCompletionScriptKnowsJobsWatchAndItsFlags(_ shell: String) async throws {
        let result = try await HeraldBinary.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("watch") && result.stdout.contains("interval"), "\(shell)")
    }

    @Test func manShWritesAPagePerSubcommandFromTheParser() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(TestServices.uniqueName("man"))
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestServices.repositoryRoot + "/deploy/dev/man.sh")
        process.arguments = [HeraldBinary.path, directory]
        let status: Int32 = try await process.exitStatus()
        #expect(status == 0)
        let pages = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(
            pages.contains("herald.1") && pages.contains("herald.jobs.watch.1") && pages.contains("herald.worker.1"))
        let watch = try String(contentsOfFile: directory + "/herald.jobs.watch.1", encoding: .utf8)
        #expect(watch.hasPrefix(".TH \"HERALD-JOBS-WATCH\" 1"))
        #expect(watch.contains("--interval") && watch.contains("(default: 1.0)"), "\(watch)")
    }

    @Test func aJobsProgressLineSaysPlanningUntilPlannedThenGivesTheShareAndTheETA() {
        let planning = JobProgressText.line(
            Self.progress(targeted: 800, sent: 300, planned: false), perSecond: 100)
        #expect(
            planning
                == "running  planning (800 targeted so far, 300 settled)  sent 300, pruned 0, failed 0, expired 0  100/s  ETA once planned"
        )
        let planned = JobProgressText.line(
            Self.progress(targeted: 2000, sent: 1190, pruned: 10, planned: true), perSecond: 400)
        #expect(
            planned == "running  60.0% (1200 of 2000 settled)  sent 1190, pruned 10, failed 0, expired 0  400/s  ETA 2s"
        )
        #expect(JobProgressText.duration(185) == "3m05s" && JobProgressText.duration(7800) == "2h10m")
        var rate = JobRate()
        let start = ContinuousClock.now
        rate.record(settled: 0, at: start)
        #expect(rate.perSecond == nil)
        rate.record(settled: 500, at: start + .seconds(2))
        #expect(rate.perSecond == 250)
    }

    static func progress(targeted: Int, sent: Int, pruned: Int = 0, planned: Bool) -> JobProgress {
        JobProgress(
            status: JobStatus(
                id: "j", app: "a", state: .running, targetKind: "all",
                counters: JobCounters(targeted: targeted, sent: sent, pruned: pruned), error: nil),
            planned: planned, secondsRunning: 3)
    }
}
