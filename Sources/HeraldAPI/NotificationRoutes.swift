import Foundation
import HTTPTypes
import HeraldCore
import HeraldProducer
import HeraldStore
import Hummingbird

/// `POST /v1/apps/{app}/notifications`: validates a job exactly as the worker will, records it, publishes it with a
/// confirm and answers 202 with its id. An `Idempotency-Key` header becomes the job id (within the app), so a
/// retried request is neither stored nor sent twice: the request whose insert of the job row succeeds is the only
/// one that publishes; any other with the same key (repeated, or concurrent) answers 200 with the existing job and
/// publishes nothing.
struct NotificationRoutes: Sendable {
    let api: API

    func add(to group: RouterGroup<APIRequestContext>) {
        group.post("apps/{app}/notifications", use: enqueue)
    }

    struct Accepted: Encodable {
        var id: String
        var state: String
        var duplicate: Bool
        var invalidTokens: Int

        enum CodingKeys: String, CodingKey {
            case id, state, duplicate
            case invalidTokens = "invalid_tokens"
        }
    }

    @Sendable func enqueue(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.send, app: app)
        let bytes = try await request.collectBody(limit: api.configuration.maximumBodySize)
        guard case .object(var object)? = try? JSONValue(json: bytes) else {
            throw APIError.badRequest("malformed_json", "the request body is not a JSON object")
        }
        if let named = object["app"], named != .string(app) {
            throw APIError.badRequest("app_mismatch", "the body names another app than the path")
        }
        object["app"] = .string(app)
        if let key = request.headers[.idempotencyKey] {
            guard !key.isEmpty, key.utf8.count <= 128, key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw APIError.badRequest(
                    "invalid_idempotency_key",
                    "Idempotency-Key must be 1 to 128 visible ASCII characters"
                )
            }
            if let id = object["id"], id != .string(key) {
                throw APIError.badRequest("id_mismatch", "the body's id differs from the Idempotency-Key")
            }
            object["id"] = .string(key)
        }

        let prepared: PreparedJob
        let body = try JSONValue.object(object).jsonBytes()
        do {
            prepared = try PreparedJob.decode(body) { UUID().uuidString.lowercased() }
        } catch {
            throw error.code == .malformed
                ? APIError.badRequest(error.code.rawValue, error.message)
                : APIError.unprocessable(error.code.rawValue, error.message)
        }
        let spec = String(decoding: try prepared.spec.jsonBytes(), as: UTF8.self)

        switch try await api.store.enqueue(prepared, spec: spec) {
        case .created(let state):
            do {
                try await api.producer.publish(prepared)
            } catch {
                // Not confirmed: forget the row so that the client's retry (same key) starts afresh.
                context.logger.error("job not published", metadata: ["job": "\(prepared.id)", "error": "\(error)"])
                try? await api.store.withdrawEnqueuedJob(prepared.key)
                throw APIError(.serviceUnavailable, code: "broker_unavailable", "the job could not be queued; retry")
            }
            // Confirmed: the workers' sweeper need not publish it. Should this fail, the sweeper publishes it again
            // later, which the job id makes harmless.
            try? await api.store.markPublished(prepared.key)
            let accepted = Accepted(
                id: prepared.id, state: state.rawValue, duplicate: false, invalidTokens: prepared.invalidTokenCount
            )
            return try JSONResponse.make(accepted, status: .accepted)
        case .existing(let sameSpec, let state):
            guard sameSpec else {
                throw APIError(
                    .conflict,
                    code: "idempotency_conflict",
                    "this Idempotency-Key was already used for a different request"
                )
            }
            // The request that created the row publishes it (or withdraws the row when it cannot): publishing again
            // here would send a copy for every repeat, and concurrent repeats would race the first. A row still
            // awaiting its publish after `unpublishedJobGrace` belongs to a request that died between its insert
            // and its publish: this repeat publishes it (once, however many repeats come), as the workers' sweeper
            // would later (`WorkerConfiguration.unpublishedJobGrace`).
            if state == .queued {
                let producer = api.producer
                do {
                    _ = try await api.store.releaseUnpublishedJob(
                        prepared.key, olderThan: api.configuration.unpublishedJobGrace
                    ) { _ in try await producer.publish(prepared) }
                } catch {
                    context.logger.error("job not published", metadata: ["job": "\(prepared.id)", "error": "\(error)"])
                    throw APIError(
                        .serviceUnavailable, code: "broker_unavailable", "the job could not be queued; retry")
                }
            }
            let accepted = Accepted(
                id: prepared.id, state: state.rawValue, duplicate: true, invalidTokens: prepared.invalidTokenCount
            )
            return try JSONResponse.make(accepted, status: .ok)
        }
    }
}

extension HTTPField.Name {
    /// `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header).
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
