import RabbitMQ
import Testing

/// `amqps://` failures are reported clearly. (A successful amqps connection and the verification failures against
/// a TLS terminator with the test certificates were checked by hand with socat and `herald bench amqp`; see the
/// issue's closing note.)
@Suite(.serialized, .timeLimit(.minutes(1))) struct AMQPTLSTests {
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
