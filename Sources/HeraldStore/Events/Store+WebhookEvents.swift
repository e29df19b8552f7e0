import PostgresNIO

/// An event of an app with a webhook, as the outbox wrote it (schemas/028): what the webhook sender signs.
public struct WebhookEvent: Sendable, Hashable {
    /// The outbox id, the `event-<n>` of its message id.
    public var id: Int64
    /// The app the event is of.
    public var app: String
    /// `job.finished.<app>`, …: the `x-herald-event` header.
    public var routingKey: String
    /// The event as the relay published it: the body that is posted and signed.
    public var body: String
}

extension Store {
    /// Keeps `webhook_apps` in step with an apps file: adds the apps with a webhook and removes those listed
    /// without one. Apps the file does not list (another worker's) are left as they are.
    public func setWebhookApps(with webhooks: [String], without: [String]) async throws(StoreError) {
        try await run("recording the apps that have webhooks") {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "INSERT INTO webhook_apps (app_id) SELECT unnest(\(webhooks)::text[]) ON CONFLICT DO NOTHING",
                    logger: logger)
                try await connection.query(
                    "DELETE FROM webhook_apps WHERE app_id = ANY(\(without)::text[])", logger: logger)
            }
        }
    }

    /// The event with outbox id `id` if the outbox wrote it for a webhook and it was not delivered yet; nil for an
    /// id the outbox never held (a message someone else published) or one already delivered.
    public func webhookEvent(id: Int64) async throws(StoreError) -> WebhookEvent? {
        try await run("reading a webhook event") {
            let rows = try await client.query(
                "SELECT app_id, routing_key, body FROM webhook_events WHERE id = \(id)", logger: logger)
            for try await (app, routingKey, body) in rows.decode((String, String, String).self) {
                return WebhookEvent(id: id, app: app, routingKey: routingKey, body: body)
            }
            return nil
        }
    }

    /// Forgets a delivered event: a later copy of its message is no longer signed.
    public func forgetWebhookEvent(id: Int64) async throws(StoreError) {
        try await run("forgetting a delivered webhook event") {
            try await client.query("DELETE FROM webhook_events WHERE id = \(id)", logger: logger)
        }
    }
}
