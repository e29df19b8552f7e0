import RabbitMQ
import Testing

@Suite struct AMQPConfigurationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let url: String
        let host: String
        let port: Int
        let user: String
        let password: String
        let vhost: String
        var testDescription: String { url }
    }

    @Test(arguments: [
        Case(
            url: "amqp://herald:herald-dev@127.0.0.1:56720/%2f", host: "127.0.0.1", port: 56720, user: "herald",
            password: "herald-dev", vhost: "/"),
        Case(url: "amqp://host", host: "host", port: 5672, user: "guest", password: "guest", vhost: "/"),
        Case(url: "amqp://host/", host: "host", port: 5672, user: "guest", password: "guest", vhost: "/"),
        Case(url: "amqp://u:p@host/%2F", host: "host", port: 5672, user: "u", password: "p", vhost: "/"),
        Case(url: "amqp://u:p@host/herald", host: "host", port: 5672, user: "u", password: "p", vhost: "herald"),
        Case(url: "amqp://u:p@host/a%2Fb", host: "host", port: 5672, user: "u", password: "p", vhost: "a/b"),
        Case(
            url: "AMQP://u%40x:p%3Aw%2F@host:1234/v", host: "host", port: 1234, user: "u@x", password: "p:w/",
            vhost: "v"),
        Case(url: "amqp://user@host", host: "host", port: 5672, user: "user", password: "", vhost: "/"),
        Case(url: "amqp://u:p@[::1]:5673/%2f", host: "::1", port: 5673, user: "u", password: "p", vhost: "/"),
        Case(url: "amqp://u:p@:5673", host: "localhost", port: 5673, user: "u", password: "p", vhost: "/"),
        Case(url: "amqp://u:p@host/v?heartbeat=5", host: "host", port: 5672, user: "u", password: "p", vhost: "v"),
    ])
    func parsesURL(_ expected: Case) throws {
        let configuration = try AMQPConfiguration(url: expected.url)
        #expect(configuration.host == expected.host)
        #expect(configuration.port == expected.port)
        #expect(configuration.user == expected.user)
        #expect(configuration.password == expected.password)
        #expect(configuration.vhost == expected.vhost)
    }

    @Test func queryParametersSetHeartbeatTimeoutAndConnectionName() throws {
        let configuration = try AMQPConfiguration(
            url: "amqp://host?heartbeat=7&connection_timeout=2500&connection_name=herald%20worker")
        #expect(configuration.heartbeat == .seconds(7))
        #expect(configuration.connectTimeout == .milliseconds(2500))
        #expect(configuration.connectionName == "herald worker")
    }

    @Test func defaultsAreThirtySecondHeartbeatAndNoName() throws {
        let configuration = try AMQPConfiguration(url: "amqp://host")
        #expect(configuration.heartbeat == .seconds(30))
        #expect(configuration.connectionName == nil)
    }

    @Test func amqpsEnablesVerifiedTLSOnPort5671WithTheGivenCA() throws {
        let configuration = try AMQPConfiguration(url: "amqps://u:p@broker.example/%2f?cacertfile=%2Fetc%2Fca.pem")
        #expect(configuration.port == 5671)
        #expect(configuration.tls?.caCertificatePath == "/etc/ca.pem")
        #expect(configuration.tls?.certificatePath == nil)
        #expect(configuration.description.hasPrefix("amqps://u:***@broker.example:5671"))

        let system = try AMQPConfiguration(url: "amqps://u:p@broker.example:5999")
        #expect(system.port == 5999)
        #expect(system.tls?.caCertificatePath == AMQPTLSConfiguration.systemCABundle)
    }

    @Test func tlsQueryKeysNeedAnAmqpsURL() {
        let error = #expect(throws: AMQPError.self) {
            try AMQPConfiguration(url: "amqp://u:p@host/?cacertfile=/ca.pem")
        }
        #expect(error?.code == .invalidURL)
    }

    @Test(arguments: [
        "http://host", "host:5672", "amqp://host:0", "amqp://host:70000", "amqp://host:abc",
        "amqp://host/a/b", "amqp://u:p%zz@host", "amqp://[::1", "amqp://host?heartbeat=-1",
    ])
    func rejectsInvalidURL(_ url: String) {
        let error = #expect(throws: AMQPError.self) { try AMQPConfiguration(url: url) }
        #expect(error?.code == .invalidURL)
    }

    @Test func neitherDescriptionNorErrorsContainThePassword() throws {
        let configuration = try AMQPConfiguration(url: "amqp://user:s3cret-pw@host:5672/%2f")
        #expect(!configuration.description.contains("s3cret-pw"))
        #expect(configuration.description.contains("user"))
        for url in ["amqp://user:s3cret-pw", "amqp://user:s3cret-pw%zz@host", "amqp://user:s3cret-pw@host:x"] {
            let error = #expect(throws: AMQPError.self) { try AMQPConfiguration(url: url) }
            #expect(error.map { !$0.description.contains("s3cret-pw") } ?? false, "\(url)")
        }
    }
}
