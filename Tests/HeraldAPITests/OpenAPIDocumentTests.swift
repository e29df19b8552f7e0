import Foundation
import HeraldAPI
import HeraldProducer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import Logging
import PostgresNIO
import RabbitMQ
import Testing

/// `schemas/openapi.yaml` documents exactly the routes the router serves.
@Suite(.needsServices) struct OpenAPIDocumentTests {
    /// `METHOD /path` for every operation under `paths:` (two-space paths, four-space methods).
    static func documentedOperations() throws -> Set<String> {
        let text = try String(contentsOfFile: TestServices.repositoryRoot + "/schemas/openapi.yaml", encoding: .utf8)
        var operations = Set<String>()
        var inPaths = false
        var path: String? = nil
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty {
                inPaths = line.hasPrefix("paths:")
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "post", "put", "patch", "delete", "head", "options"].contains(String(key)) {
                    operations.insert("\(key.uppercased()) \(path)")
                }
            }
        }
        return operations
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedRouteExists() throws {
        let logger = Logger(label: "test.openapi")
        let database = try DatabaseConfiguration(url: TestServices.databaseURL)
        let configuration = APIConfiguration(amqp: AMQPConfiguration(), database: database)
        // Neither the pool nor the producer connects: building the router needs no services.
        let store = Store(
            client: PostgresClient(configuration: database.clientConfiguration, backgroundLogger: logger),
            logger: logger)
        let producer = Producer(configuration: API.producerConfiguration(configuration), logger: logger)
        let router = API(configuration: configuration, store: store, producer: producer).makeRouter()
        let served = Set(router.routes.map { "\($0.method.rawValue) \($0.path)" })
        let documented = try Self.documentedOperations()
        #expect(served.count >= 10)
        #expect(served.subtracting(documented).isEmpty, "undocumented: \(served.subtracting(documented).sorted())")
        #expect(documented.subtracting(served).isEmpty, "not served: \(documented.subtracting(served).sorted())")
    }
}
