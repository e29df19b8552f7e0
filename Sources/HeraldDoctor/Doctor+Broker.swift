import HeraldMessaging
import NIOCore
import NIOPosix
import RabbitMQ

extension Doctor {
    /// The broker: the URL parses, the user logs in to the vhost, and every exchange and queue of the topology
    /// exists with the type and arguments the workers declare. Nothing is created.
    func checkBroker() async -> [DoctorFinding] {
        let url: String
        switch deployment.amqpURL {
        case .success(let given): url = given
        case .failure(let unresolved): return [.fail("broker", unresolved.message)]
        }
        var configuration: AMQPConfiguration
        do {
            configuration = try AMQPConfiguration(url: url)
        } catch {
            return [.fail("broker", "the AMQP URL is not valid (\(error.message)): fix --amqp-url or HERALD_AMQP_URL")]
        }
        configuration.connectionName = "herald-doctor"
        configuration.connectTimeout = deployment.timeout
        configuration.reconnect = nil
        let connection: AMQPConnection
        do {
            connection = try await AMQPConnection.connect(configuration, logger: logger)
        } catch {
            var reason = Self.brokerReason(error)
            if error.code == .connectionFailed, error.replyCode == nil, configuration.tls == nil,
                let refused = await tcpFailure(host: configuration.host, port: configuration.port)
            {
                reason = refused
            }
            return [.fail("broker", Self.loginFailure(error, configuration, reason: reason))]
        }
        var findings = [
            DoctorFinding.pass("broker", "logged in to \(Self.place(configuration)) as \(configuration.user)")
        ]
        findings += await checkTopology(on: connection)
        await connection.close()
        return findings
    }

    /// `127.0.0.1:56720 vhost /`, with the TLS CA for amqps: never the password.
    static func place(_ configuration: AMQPConfiguration) -> String {
        var text = "\(configuration.host):\(configuration.port) vhost \(configuration.vhost)"
        if let tls = configuration.tls { text += " over TLS (CA \(tls.caCertificatePath))" }
        return text
    }

    /// Why the connection or the login failed, as a sentence with the fix.
    static func loginFailure(_ error: AMQPError, _ configuration: AMQPConfiguration, reason: String) -> String {
        let place = place(configuration)
        if error.code == .authenticationFailed {
            return "the broker at \(place) refused the login of user \(configuration.user) (ACCESS_REFUSED): "
                + "fix the user or password in --amqp-url / HERALD_AMQP_URL, or create the user "
                + "(rabbitmqctl add_user)"
        }
        if error.replyCode == 530 {
            return "the broker refused vhost \(configuration.vhost) to user \(configuration.user) (NOT_ALLOWED: the "
                + "vhost does not exist, or the user has no permissions on it): create it (rabbitmqctl add_vhost) and "
                + "grant the user permissions (rabbitmqctl set_permissions), or fix the vhost in --amqp-url / "
                + "HERALD_AMQP_URL (%2f is /)"
        }
        return "cannot connect to the broker at \(place) (\(reason)): check that RabbitMQ runs there "
            + "and that --amqp-url / HERALD_AMQP_URL names it"
    }

    /// Why a TCP connection to the broker's address fails, if it does: rabbitmq-c says only "a socket error
    /// occurred", where a connection of our own names the reason (connection refused, no route to host).
    func tcpFailure(host: String, port: Int) async -> String? {
        do {
            let channel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(TimeAmount(deployment.timeout))
                .connect(host: host, port: port).get()
            try? await channel.close()
            return nil
        } catch {
            return DoctorNetworkReason.describe(error)
        }
    }

    /// The broker's or the library's own words, without the code and status numbers of `AMQPError.description`.
    static func brokerReason(_ error: AMQPError) -> String {
        var text = error.message
        for prefix in ["broker closed the channel: ", "broker closed the connection: "] {
            if let range = text.range(of: prefix) { text = String(text[range.upperBound...]) }
        }
        if let range = text.range(of: " vhost "), text.hasPrefix("connecting to "),
            let colon = text[range.upperBound...].range(of: ": ")
        {
            text = String(text[colon.upperBound...])
        }
        return text
    }

    /// The events exchange and every queue: present (passive declare: 404 if not), then of the expected kind
    /// (declared again as the workers declare it, which changes nothing on a queue that exists: 406 if it differs).
    /// A refusal closes the channel it came on; the connection opens a fresh one for the next probe.
    func checkTopology(on connection: AMQPConnection) async -> [DoctorFinding] {
        let topology = deployment.topology
        var findings: [DoctorFinding] = []
        var problems = 0
        do {
            try await connection.checkExchange(topology.events)
            do {
                try await connection.declareExchange(topology.events, type: "topic")
            } catch {
                problems += 1
                findings.append(
                    Self.mismatch(error, what: "exchange \(topology.events)", expected: "a durable topic exchange"))
            }
        } catch {
            problems += 1
            findings.append(Self.absence(error, what: "exchange \(topology.events)"))
        }
        let expectation =
            "a durable \(topology.queueType.rawValue) queue as --queue-type \(topology.queueType.rawValue) declares it"
        for (name, arguments) in topology.queues {
            do {
                _ = try await connection.queueMessageCount(name)
            } catch {
                problems += 1
                findings.append(Self.absence(error, what: "queue \(name)"))
                continue
            }
            do {
                _ = try await connection.declareQueue(name, durable: true, arguments: arguments)
            } catch {
                if error.replyCode == 406, let earlier = topology.earlierArguments(of: name),
                    (try? await connection.declareQueue(name, durable: true, arguments: earlier)) != nil
                {
                    findings.append(.warn("broker", Self.olderQueue(name, topology)))
                } else {
                    problems += 1
                    findings.append(Self.mismatch(error, what: "queue \(name)", expected: expectation))
                }
            }
        }
        if problems == 0 {
            findings.append(
                .pass(
                    "broker",
                    "topology present: exchange \(topology.events) and \(topology.queues.count) \(topology.queueType.rawValue) "
                        + "queues named \(topology.prefix).*, with the arguments the workers declare"))
        }
        return findings
    }

    static func olderQueue(_ name: String, _ topology: Topology) -> String {
        if name == topology.webhooks || name == topology.webhooksParked {
            return "queue \(name) is as an earlier Herald declared it, without x-max-length (it is not bounded); the "
                + "workers take it as it is. See docs/operations.md (Upgrades and draining) to bound it by policy"
        }
        let missing =
            topology.queueType == .classic
            ? "x-max-priority (its messages keep FIFO order, without lanes)"
            : "a dead-letter target (a message past x-delivery-limit is dropped by the broker, not parked)"
        return "queue \(name) is as an earlier Herald declared it, without \(missing); the workers take it as it is. "
            + "See docs/operations.md (Upgrades and draining) to recreate it or add the target by policy"
    }

    static func absence(_ error: AMQPError, what: String) -> DoctorFinding {
        guard error.replyCode == 404 else { return refusal(error, what: what) }
        return .fail(
            "broker",
            "\(what) does not exist: start a worker once with the same --queue-prefix and --queue-type (it declares "
                + "the topology), or load deploy/rabbitmq/definitions.json (herald topology export)")
    }

    static func mismatch(_ error: AMQPError, what: String, expected: String) -> DoctorFinding {
        guard error.replyCode == 406 else { return refusal(error, what: what) }
        return .fail(
            "broker",
            "\(what) exists with other settings than \(expected) (\(brokerReason(error))): run every process with "
                + "the --queue-type the queues were made with, or drain, delete and redeclare them")
    }

    /// Anything else: no permission (403), or the connection lost.
    static func refusal(_ error: AMQPError, what: String) -> DoctorFinding {
        if error.replyCode == 403 {
            return .fail(
                "broker",
                "the user may not check \(what) (ACCESS_REFUSED: \(brokerReason(error))): grant it configure "
                    + "permission on Herald's queues (rabbitmqctl set_permissions), as the workers need")
        }
        return .fail("broker", "checking \(what) failed (\(brokerReason(error))): check the broker's logs")
    }
}
