import Foundation
import HeraldCore
import HeraldMessaging
import HeraldStore
import Logging
import Metrics
import RabbitMQ
import ServiceLifecycle

/// Releases scheduled jobs when their `send_at` comes: takes due jobs with `FOR UPDATE SKIP LOCKED` (so any number
/// of workers can run it), publishes each back to `herald.jobs` with a confirm, and marks it queued in the same
/// transaction. Resumes paused planning the same way (`Planner`, schemas/017). Finished jobs past the idempotency
/// window are removed by `Retention`.
struct Scheduler: Sendable {
    let store: Store
    let configuration: WorkerConfiguration
    let publisher: AMQPConnection
    let metrics: WorkerMetrics
    let logger: Logger

    func run() async throws {
        var lastRelease: ContinuousClock.Instant? = nil
        // Paused planning is looked at more often than scheduled jobs: a paced job's queue must not run dry.
        let tick = min(configuration.schedulerInterval, configuration.planningResumeInterval)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                while try await resumePlanning() == 100 {}
                while try await relayEvents() == 500 {}
                let now = configuration.clock.now()
                if lastRelease.map({ $0.duration(to: now) >= configuration.schedulerInterval }) ?? true {
                    lastRelease = now
                    while try await releaseDue() == 100 {}
                    while try await releaseUnpublished() == 100 {}
                }
            } catch {
                logger.error("scheduler pass failed", metadata: ["error": "\(error)"])
            }
            // Woken by a graceful shutdown too: a worker stopping does not wait out the interval.
            try? await cancelWhenGracefulShutdown { [clock = configuration.clock] in try await clock.sleep(tick) }
        }
    }

    /// One pass; returns how many jobs it released.
    func releaseDue() async throws -> Int {
        let released = try await store.releaseDueJobs(limit: 100) { due in try await publish(due, resumed: false) }
        return counted(released, metrics.jobsScheduledReleased, "scheduled jobs released", level: .info)
    }

    /// One pass over the jobs an API recorded but never published; returns how many it published.
    func releaseUnpublished() async throws -> Int {
        let released = try await store.releaseUnpublishedJobs(
            olderThan: configuration.unpublishedJobGrace, limit: 100
        ) { due in try await publish(due, resumed: false) }
        if released > 0 {
            logger.notice("jobs an API recorded but did not publish were published", metadata: ["count": "\(released)"])
        }
        return released
    }

    /// One pass over paused planning; returns how many jobs it resumed.
    func resumePlanning() async throws -> Int {
        let resumed = try await store.resumePausedPlanning(limit: 100) { due in try await publish(due, resumed: true) }
        return counted(resumed, metrics.planningResumed, "paused planning resumed", level: .debug)
    }

    /// Counts and logs what a pass did; returns `count`.
    private func counted(_ count: Int, _ counter: Counter, _ line: Logger.Message, level: Logger.Level) -> Int {
        guard count > 0 else { return 0 }
        counter.increment(by: count)
        logger.log(level: level, line, metadata: ["count": "\(count)"])
        return count
    }

    /// One pass of the events relay; returns how many events it published.
    func relayEvents() async throws -> Int {
        let exchange = configuration.topology.events
        let publisher = self.publisher
        let relayed = try await store.relayEvents(limit: 500) { events in
            for event in events {
                try await publisher.publish(
                    Array(event.body.utf8), exchange: exchange, routingKey: event.routingKey,
                    properties: AMQPProperties(contentType: "application/json", messageID: "event-\(event.id)"))
            }
        }
        if relayed > 0 { metrics.eventsPublished.increment(by: relayed) }
        return relayed
    }

    /// Publishes job messages back to `herald.jobs` at their broker priority, each with a confirm; a `resumed` one says so
    /// (`ParkingHeader.resumedPlanning`), so that it waits for the job's planning claim.
    private func publish(_ jobs: [(job: JobKey, spec: String)], resumed: Bool) async throws {
        for job in jobs {
            // The spec is the job as the worker stored it, so it decodes; APNs' default priority if it ever did not.
            // Resumed planning is the rest of a large job: the bulk lane.
            let spec = try? JSONDecoder().decode(Job.self, from: Data(job.spec.utf8))
            let priority = Job.brokerPriority(apnsPriority: spec?.notification.priority, bulk: resumed)
            var properties = AMQPProperties(
                contentType: "application/json", messageID: job.job.id, priority: priority)
            if resumed { properties.headers[ParkingHeader.resumedPlanning] = .bool(true) }
            try await publisher.publish(
                Array(job.spec.utf8), routingKey: configuration.topology.jobs, properties: properties, mandatory: true)
        }
    }
}
