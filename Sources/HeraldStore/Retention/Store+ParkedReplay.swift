extension Store {
    /// Forgets the record of a job the worker rejected at intake and parked (`recordRejectedJob`: failed, target
    /// kind `unknown`, nothing sent, the parking reason as its error), so that the job, replayed from the parking
    /// queue once its cause is fixed, is taken as new rather than as a duplicate of a failed job. Any other row (a
    /// job that ran, or whose error differs) is kept. Returns whether a row was forgotten.
    @discardableResult
    public func forgetRejectedJob(app: String, id: String, reason: String) async throws(StoreError) -> Bool {
        try await run("forgetting a rejected job") {
            let rows = try await client.query(
                """
                DELETE FROM jobs WHERE app_id = \(app) AND id = \(id) AND state = 'failed' AND target_kind = 'unknown'
                AND error = \(reason) AND targeted = 0 AND sent = 0 AND pruned = 0 AND failed = 0
                RETURNING 1
                """,
                logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }
}
