import Foundation
import HeraldCore
import HeraldStore
import Logging
import PostgresNIO

/// End-to-end latency percentiles, for `herald bench pipeline`.
package struct LatencySummary: Sendable, Hashable {
    /// Notifications (or jobs) measured.
    package var count: Int
    /// The median, in milliseconds.
    package var p50Milliseconds: Double
    /// The 99th percentile, in milliseconds.
    package var p99Milliseconds: Double
    /// When the last result was written (ms since 1970; 0 if none).
    package var lastResultMilliseconds: Double = 0
}

// Queries only `herald bench pipeline` runs: here rather than in HeraldStore, so the production store carries no
// benchmark code.

extension Store {
    /// Latency from publish to completion of the jobs whose id starts with `prefix` (one device each): the exact
    /// per-job figure.
    package func jobLatency(app: String, idPrefix prefix: String) async throws(StoreError) -> LatencySummary {
        let pattern = prefix.replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
        return try await run("reading job latencies") {
            let rows = try await client.query(
                """
                SELECT count(*)::bigint,
                       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - published_at)), 0)::float8 * 1000,
                       coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM finished_at - published_at)), 0)::float8 * 1000,
                       coalesce(extract(epoch FROM max(finished_at)), 0)::float8 * 1000
                FROM jobs WHERE app_id = \(app) AND id LIKE \(pattern) AND state = 'done'
                """,
                logger: logger
            )
            for try await (count, p50, p99, last) in rows.decode((Int64, Double, Double, Double).self) {
                return LatencySummary(
                    count: Int(count), p50Milliseconds: p50, p99Milliseconds: p99, lastResultMilliseconds: last)
            }
            return LatencySummary(count: 0, p50Milliseconds: 0, p99Milliseconds: 0)
        }
    }

    /// Latency from the job's publish to each batch's completion, weighted by the notifications the batch sent: the
    /// per-notification figure at batch granularity (a notification is counted when its batch's results are written).
    package func batchLatency(job: JobKey) async throws(StoreError) -> LatencySummary {
        try await run("reading batch latencies") {
            let rows = try await client.query(
                """
                WITH per_notification AS (
                    SELECT extract(epoch FROM b.completed_at - j.published_at) AS latency, b.completed_at
                    FROM batches b JOIN jobs j ON j.app_id = b.app_id AND j.id = b.job_id, generate_series(1, b.sent)
                    WHERE b.app_id = \(job.app) AND b.job_id = \(job.id) AND b.state = 'done')
                SELECT count(*)::bigint,
                       coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY latency), 0)::float8 * 1000,
                       coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY latency), 0)::float8 * 1000,
                       coalesce(extract(epoch FROM max(completed_at)), 0)::float8 * 1000
                FROM per_notification
                """,
                logger: logger
            )
            for try await (count, p50, p99, last) in rows.decode((Int64, Double, Double, Double).self) {
                return LatencySummary(
                    count: Int(count), p50Milliseconds: p50, p99Milliseconds: p99, lastResultMilliseconds: last)
            }
            return LatencySummary(count: 0, p50Milliseconds: 0, p99Milliseconds: 0)
        }
    }

    /// How many of the app's jobs whose id starts with `prefix` are final (read through the app's index, so that
    /// polling stays cheap however many jobs other apps have).
    package func finishedJobCount(app: String, idPrefix prefix: String) async throws(StoreError) -> Int {
        let pattern = prefix.replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
        return try await run("counting finished jobs") {
            let rows = try await client.query(
                """
                SELECT count(*)::bigint FROM jobs
                WHERE app_id = \(app) AND id LIKE \(pattern) AND herald_job_is_final(state)
                """,
                logger: logger
            )
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }

    /// Removes every job of an app, with its batches and badge records (for benchmarks, which use an app of their
    /// own).
    @discardableResult
    package func deleteJobs(app: String) async throws(StoreError) -> Int {
        try await run("deleting jobs") {
            let rows = try await client.query(
                """
                WITH gone AS (DELETE FROM jobs WHERE app_id = \(app) RETURNING id),
                gone_batches AS (DELETE FROM batches WHERE app_id = \(app)),
                gone_badges AS (DELETE FROM badge_applications WHERE app_id = \(app))
                SELECT count(*)::bigint FROM gone
                """,
                logger: logger
            )
            var count = 0
            for try await n in rows.decode(Int64.self) { count = Int(n) }
            return count
        }
    }
}
