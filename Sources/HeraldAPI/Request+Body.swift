import Foundation
import HeraldCore
import Hummingbird
import NIOCore

extension Request {
    /// The body, at most `limit` bytes (413 beyond it, before reading more than the limit).
    func collectBody(limit: Int) async throws -> [UInt8] {
        if let length = headers[.contentLength].flatMap(Int.init), length > limit { throw APIError.tooLarge }
        var buffer = try await body.collect(upTo: limit)
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    /// Decodes a JSON body into `type`, answering a 400 that names the field (never its value) when it does not fit.
    func decodeJSON<T: Decodable>(_ type: T.Type, limit: Int) async throws -> T {
        let bytes = try await collectBody(limit: limit)
        guard !bytes.isEmpty else { throw APIError.badRequest("malformed_json", "the request body is empty") }
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch let error as DecodingError {
            throw APIError.badRequest("malformed_json", DecodingDescription.describe(error))
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.badRequest("malformed_json", "the request body is not JSON")
        }
    }
}

/// Any key of a JSON object, for listing an object's keys.
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// Refuses an object with a key not in `known` (400 `unknown_field`), naming the nearest known one: "unknown
    /// field userId in the device registration; did you mean user_id?".
    func refuseUnknownFields(_ known: [String], in place: String) throws {
        let keys = try container(keyedBy: AnyCodingKey.self).allKeys.map(\.stringValue)
        guard let unknown = JobFieldSuggestion.firstUnknown(keys, known: known) else { return }
        throw APIError.badRequest(
            "unknown_field", JobFieldSuggestion.message(unknown: unknown, in: place, known: known))
    }
}

extension Parameters {
    /// A path parameter, percent-decoded.
    func decoded(_ name: String) throws -> String {
        let raw = try require(name)
        return raw.removingPercentEncoding ?? raw
    }
}

/// Describes a decoding error by the path of the field, never the value.
enum DecodingDescription {
    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "missing field \(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = path(context)
            return field.isEmpty ? "the body has the wrong type" : "field \(field) has the wrong type"
        case .dataCorrupted(let context):
            let field = path(context)
            return field.isEmpty ? "the request body is not valid JSON" : "field \(field) is invalid"
        @unknown default:
            return "the request body cannot be decoded"
        }
    }
}

/// JSON responses.
enum JSONResponse {
    static func make<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(
            status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
