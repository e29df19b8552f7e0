import HeraldCore
import PostgresNIO

/// One event waiting in the outbox (schemas/018).
public struct OutboxEvent: Sendable, Hashable {
    /// Its id: the message id it is published with, so that a subscriber can drop a second copy.
    public var id: Int64
    /// `job.finished.<app>`, `job.failed.<app>`, `job.cancelled.<app>` or `token.pruned.<app>`.
    public var routingKey: String
    /// The event as JSON (schemas/events.schema.json).
    public var body: String
}

extension Store {
    /// Keeps `event_apps` in step with an apps file: adds the apps that have events and removes those listed
    /// without. Apps the file does not list (another worker's) are left as they are.
    public func setEventApps(with events: [String], without: [String]) async throws(StoreError) {
        try await run("recording the apps that have events") {
            try await client.withTransaction(logger: logger) { connection in
                // One writer at a time: the trigger that switches the events triggers (schemas/025) must see the
                // other writers' rows, or two workers, one adding the first app and one removing the last other,
                // could leave them off with an app that has events.
                try await connection.query("LOCK TABLE event_apps IN SHARE ROW EXCLUSIVE MODE", logger: logger)
                try await connection.query(
                    "INSERT INTO event_apps (app_id) SELECT unnest(\(events)::text[]) ON CONFLICT DO NOTHING",
                    logger: logger)
                try await connection.query(
                    "DELETE FROM event_apps WHERE app_id = ANY(\(without)::text[])", logger: logger)
            }
        }
    }

    /// Takes up to `limit` events from the outbox, oldest first, locked so that concurrent relays never take the
    /// same one, hands them to `publish` (which publishes them with confirms), and deletes them when it succeeds.
    ///
    /// - Returns: how many events were published.
    public func relayEvents(
        limit: Int,
        _ publish: @escaping @Sendable ([OutboxEvent]) async throws -> Void
    ) async throws(StoreError) -> Int {
        try await run("relaying events") {
            try await client.withTransaction(logger: logger) { connection in
                let rows = try await connection.query(
                    """
                    SELECT id, routing_key, body::text FROM event_outbox
                    ORDER BY id LIMIT \(limit) FOR UPDATE SKIP LOCKED
                    """,
                    logger: logger
                )
                var events: [OutboxEvent] = []
                for try await (id, routingKey, body) in rows.decode((Int64, String, String).self) {
                    events.append(OutboxEvent(id: id, routingKey: routingKey, body: body))
                }
                guard !events.isEmpty else { return 0 }
                try await publish(events)
                try await connection.query(
                    "DELETE FROM event_outbox WHERE id = ANY(\(events.map(\.id))::bigint[])", logger: logger)
                return events.count
            }
        }
    }
}
