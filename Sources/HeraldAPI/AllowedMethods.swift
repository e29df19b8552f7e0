import HTTPTypes
import Hummingbird
import Synchronization

/// The methods each route template serves, so that a request for a known path with another method is answered
/// 405 with `Allow` rather than 404. Hummingbird's router answers both with its not-found responder; `ErrorMiddleware`
/// asks this table which of the two it was. Filled from `Router.routes` once every route is added.
final class AllowedMethods: Sendable {
    private let templates = Mutex<[(segments: [Substring], methods: Set<String>)]>([])

    /// Records the routes: one entry per path template, with every method it serves.
    func record(_ routes: [(path: String, method: String)]) {
        var byPath: [String: Set<String>] = [:]
        for route in routes { byPath[route.path, default: []].insert(route.method) }
        templates.withLock { templates in
            templates = byPath.map { (Self.segments($0.key), $0.value) }
        }
    }

    /// The methods served at `path` (sorted), empty if no template matches it. `{name}` and `:name` segments match
    /// any one non-empty segment.
    func methods(for path: String) -> [String] {
        let request = Self.segments(path)
        var methods = Set<String>()
        templates.withLock { templates in
            for template in templates where template.segments.count == request.count {
                let matches = zip(template.segments, request).allSatisfy { pattern, segment in
                    pattern.hasPrefix("{") || pattern.hasPrefix(":") || pattern == segment
                }
                if matches { methods.formUnion(template.methods) }
            }
        }
        return methods.sorted()
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
