import APNSCore
import FCMCore
import HeraldCore
import HeraldStore
import Logging
import RabbitMQ
import Testing

@testable import HeraldDemo

/// The demo's plan, without the services: which devices are dead and which devices each job must reach. `make demo`
/// runs the whole scenario against the services.
@Suite struct DemoScenarioTests {
    static func scenario(devices: Int = 1000) throws -> DemoScenario {
        DemoScenario(
            stateDirectory: "/nonexistent", schemasDirectory: "/nonexistent", deviceCount: devices,
            amqp: try AMQPConfiguration(url: DemoScenario.defaultAMQPURL),
            database: try DatabaseConfiguration(url: DemoScenario.defaultDatabaseURL),
            logger: Logger(label: "HeraldDemoTests"))
    }

    @Test func aQuarterAreAndroidPhonesSomeOfEachPlatformDeadAndEveryTokenValidAndUnique() throws {
        let devices = try Self.scenario().makeDevices()
        #expect(devices.count == 1000)
        let (ios, android) = (devices.filter { $0.platform == .ios }, devices.filter { $0.platform == .android })
        #expect(android.count == 250)
        #expect(ios.filter(\.isDead).count == 50 && android.filter(\.isDead).count == 25)
        #expect(devices.allSatisfy { $0.token.hasPrefix($0.isDead ? "dead" : "a11e") })
        #expect(ios.allSatisfy { $0.token.count == 64 && (try? DeviceToken(parsing: $0.token)) != nil })
        #expect(android.allSatisfy { (try? FCMTarget(token: $0.token)) != nil })
        #expect(Set(devices.map(\.token)).count == devices.count)
        // Every Android phone's user also has an iPhone.
        #expect(Set(android.map(\.user)).isSubset(of: Set(ios.map(\.user))))
    }

    @Test func jobsCoverEveryTargetKindTwiceAndExpectOnlyLiveDevices() throws {
        let scenario = try Self.scenario()
        let devices = scenario.makeDevices()
        let live = Set(devices.filter { !$0.isDead }.map(\.token))
        let jobs = scenario.makeJobs(devices)
        #expect(jobs.map(\.kind) == ["tokens", "tokens", "users", "users", "topic", "topic", "all", "all"])
        #expect(Set(jobs.map(\.id)).count == jobs.count)
        #expect(jobs.allSatisfy { !$0.expected.isEmpty && $0.expected.isSubset(of: live) })
        #expect(jobs.last?.expected == live)
    }

    @Test func theTableAlignsNamesLeftAndNumbersRight() {
        let table = DemoScenario.format([
            ["job", "target", "state", "sent", "check"],
            ["a-long-job", "all", "done", "7", "ok"],
        ])
        #expect(table == "job         target  state  sent  check\na-long-job  all     done      7  ok   ")
    }
}

@Suite struct DemoLegendTests {
    @Test func theLegendExplainsEveryCountedColumnAndWhyAPassingRunShowsFailures() {
        let legend = DemoScenario.legend(deadCount: 50)
        for column in ["targeted", "sent", "pruned", "failed", "check"] {
            #expect(legend.split(separator: "\n").contains { $0.hasPrefix(column + " ") }, "\(column)")
        }
        #expect(legend.contains("another job had") && legend.contains("\"already pruned\""))
        #expect(legend.contains("50 of the demo's devices are dead"))
    }
}
