import Foundation
import HeraldTestSupport
import RabbitMQ
import Testing

/// `amqps://` against the dev broker's TLS listener (`deploy/dev/services.sh`: a dev CA, a certificate for
/// `localhost` only, and a second CA that signed nothing): a verified connection works end to end, and a broker
/// the client cannot verify is refused with an error that says so, without the password.
@Suite(.needsServices, .serialized, .timeLimit(.minutes(1))) struct AMQPTLSTests {
    @Test func amqpsWithTheBrokersCAPublishesAndConsumes() async throws {
        let encodedCA = try #require(
            TLSBroker.caFile.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", ".", "_"])))
        var configuration = try AMQPConfiguration(url: TLSBroker.url + "?cacertfile=" + encodedCA)
        configuration.connectionName = "herald-tests-amqps-\(UInt32.random(in: 0...UInt32.max))"
        #expect(configuration.tls == AMQPTLSConfiguration(caCertificatePath: TLSBroker.caFile))
        let connection = try await AMQPConnection.connect(configuration, logger: Broker.logger)
        let queue = Broker.uniqueQueue()
        _ = try await connection.declareQueue(queue, durable: false)
        let body = Array(#"{"over":"tls"}"#.utf8)
        try await connection.publish(body, routingKey: queue, properties: AMQPProperties(persistent: true))
        let consumer = try await connection.consume(queue: queue, prefetch: 1)
        let delivery = try await consumer.nextDelivery()
        #expect(delivery.body == body)
        try await consumer.ack(delivery)
        try await consumer.cancel()
        #expect(try await connection.queueMessageCount(queue) == 0)
        try await connection.deleteQueue(queue)
        await connection.close()
    }

    @Test func aBrokerCertificateFromAnotherCAIsRefused() async throws {
        var configuration = try AMQPConfiguration(url: TLSBroker.url)
        configuration.tls = AMQPTLSConfiguration(caCertificatePath: TLSBroker.otherCAFile)
        configuration.connectTimeout = .seconds(5)
        try await Self.expectVerificationFailure(configuration)
    }

    @Test func aHostNameTheCertificateDoesNotNameIsRefused() async throws {
        // The certificate names localhost; 127.0.0.1 is the same listener under a name it does not carry.
        var configuration = try AMQPConfiguration(url: TLSBroker.url)
        configuration.host = "127.0.0.1"
        configuration.tls = AMQPTLSConfiguration(caCertificatePath: TLSBroker.caFile)
        configuration.connectTimeout = .seconds(5)
        try await Self.expectVerificationFailure(configuration)
    }

    private static func expectVerificationFailure(_ configuration: AMQPConfiguration) async throws {
        let error = await #expect(throws: AMQPError.self) {
            try await AMQPConnection.connect(configuration, logger: Broker.logger)
        }
        #expect(error?.code == .connectionFailed)
        #expect(
            error?.message.contains("TLS verification of the broker failed") == true, "\(String(describing: error))")
        #expect(error.map { !$0.description.contains(configuration.password) } ?? false)
    }

    @Test func amqpsToAPlainAMQPPortFailsAsConnectionFailed() async throws {
        var configuration = try Broker.configuration()
        configuration.tls = AMQPTLSConfiguration()
        configuration.connectTimeout = .seconds(5)
        let error = await #expect(throws: AMQPError.self) {
            try await AMQPConnection.connect(configuration, logger: Broker.logger)
        }
        #expect(error?.code == .connectionFailed)
        #expect(error.map { !$0.description.contains(configuration.password) } ?? false)
    }

    @Test func unreadableCAFileFailsBeforeConnecting() async throws {
        var configuration = try Broker.configuration()
        configuration.tls = AMQPTLSConfiguration(caCertificatePath: "/nonexistent/herald-ca.pem")
        let error = await #expect(throws: AMQPError.self) {
            try await AMQPConnection.connect(configuration, logger: Broker.logger)
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.message.contains("cannot load the CA certificates") == true)
    }
}

/// The dev broker's amqps listener and its CA files, from `make test` (services.env), or the dev defaults.
enum TLSBroker {
    static let environment = ProcessInfo.processInfo.environment
    static let stateDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../.state/rabbitmq/tls").standardized.path
    static let url = environment["HERALD_TEST_AMQPS_URL"] ?? "amqps://herald:herald-dev@localhost:56723/%2f"
    static let caFile = environment["HERALD_TEST_AMQPS_CA_FILE"] ?? stateDirectory + "/ca.pem"
    static let otherCAFile = environment["HERALD_TEST_AMQPS_OTHER_CA_FILE"] ?? stateDirectory + "/other-ca.pem"
}
