import Foundation
import HTTPTypes
import HeraldStore
import Hummingbird
import NIOCore

/// `GET /v1/apps/{app}/reports/dead-tokens?since=&until=&format=json|csv`: pruned tokens with reason, APNs
/// timestamp, time and job, plus totals by reason and by day.
struct ReportRoutes: Sendable {
    let api: API

    func add(to group: RouterGroup<APIRequestContext>) {
        group.get("apps/{app}/reports/dead-tokens", use: deadTokens)
    }

    @Sendable func deadTokens(_ request: Request, context: APIRequestContext) async throws -> Response {
        let app = try context.parameters.decoded("app")
        _ = try context.require(.read, app: app)
        let query = request.uri.queryParameters
        let now = Date(timeIntervalSince1970: api.configuration.clock.unixTime())
        let since: Int64
        if let text = query["since"].map(String.init) {
            guard let value = TimeWindow.milliseconds(text, now: now) else {
                throw APIError.badRequest("invalid_query", "since must be RFC 3339 or a duration such as 7d")
            }
            since = value
        } else {
            since = Int64(now.timeIntervalSince1970 * 1000) - 7 * 86_400_000
        }
        var until: Int64? = nil
        if let text = query["until"].map(String.init) {
            guard let value = TimeWindow.milliseconds(text, now: now) else {
                throw APIError.badRequest("invalid_query", "until must be RFC 3339 or a duration such as 1d")
            }
            until = value
        }
        var limit = api.configuration.maximumReportRows
        if let text = query["limit"].map(String.init) {
            // Any number of digits: a limit beyond what the API lists is the API's limit.
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw APIError.badRequest("invalid_query", "limit must be a non-negative integer")
            }
            limit = min(Int(text) ?? Int.max, limit)
        }
        let format = query["format"].map(String.init) ?? "json"
        guard format == "json" || format == "csv" else {
            throw APIError.badRequest("invalid_query", "format must be json or csv")
        }
        let report = try await api.store.deadTokenReport(app: app, since: since, until: until, limit: limit)
        if format == "csv" {
            var headers = HTTPFields()
            headers[.contentType] = "text/csv; charset=utf-8"
            headers[HTTPField.Name("X-Herald-Total")!] = String(report.total)
            return Response(
                status: .ok,
                headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: ReportRendering.deadTokensCSV(report)))
            )
        }
        return try JSONResponse.make(ReportRendering.DeadTokens(app: app, since: since, until: until, report: report))
    }
}
