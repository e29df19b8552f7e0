import Foundation
import HeraldCore
import HeraldMessaging
import HeraldTestSupport
import HeraldWorker
import Testing
import Yams

/// The files under `deploy/` cannot run here (no container engine, no cluster), so they are kept correct by
/// construction: each is parsed, and everything in it that names something in the code — the image and its
/// entrypoint, subcommands and their flags, ports, environment variables, probe paths, queue names, metric names —
/// is checked against the code.
@Suite struct DeploymentFilesTests {
    static let root = TestServices.repositoryRoot

    // MARK: The image

    @Test func theDockerfileBuildsHeraldInASwiftStageAndRunsItAsANonRootEntrypointInASlimStage() throws {
        let lines = try Self.dockerfileInstructions()
        let stages = lines.filter { $0.hasPrefix("FROM ") }
        #expect(stages.count == 2)
        #expect(stages.first?.range(of: #"^FROM swift:6\.\d+-bookworm AS build$"#, options: .regularExpression) != nil)
        #expect(stages.last == "FROM debian:bookworm-slim AS runtime")
        let build = lines.first { $0.contains("swift build") } ?? ""
        #expect(build.contains("-c release") && build.contains("--product \(Self.executableProduct)"))
        let buildPackages = lines.first { $0.contains("apt-get install") } ?? ""
        for package in ["librabbitmq-dev", "libnghttp2-dev", "libssl-dev"] { #expect(buildPackages.contains(package)) }
        let runtimePackages = lines.last { $0.contains("apt-get install") } ?? ""
        for package in ["librabbitmq4", "libnghttp2-14", "libssl3", "ca-certificates", "curl"] {
            #expect(runtimePackages.contains(package), "runtime image lacks \(package)")
        }
        let user = try #require(lines.last { $0.hasPrefix("USER ") })
        #expect(!user.contains("root") && !user.hasSuffix(" 0"))
        #expect(lines.contains(#"ENTRYPOINT ["herald"]"#))
        #expect(lines.contains { $0.hasPrefix("COPY") && $0.contains("/usr/local/bin/herald") })
        #expect(lines.contains { $0.hasPrefix("COPY") && $0.contains("schemas") })

        let exposed = Set(
            lines.filter { $0.hasPrefix("EXPOSE ") }.flatMap { $0.split(separator: " ").dropFirst() }.map(String.init))
        #expect(exposed == [String(try Self.workerMetricsPort()), String(try Self.apiPort())])

        let environment = Self.dockerEnvironment(lines)
        try Self.expectKnownEnvironment(environment.keys, in: "Dockerfile")
        #expect(environment["HERALD_METRICS_PORT"] == String(try Self.workerMetricsPort()))
        #expect(environment["HERALD_API_PORT"] == String(try Self.apiPort()))
        #expect(environment["HERALD_SCHEMAS_DIR"] == "/app/schemas")
    }

    // MARK: compose

    @Test func composeRunsBrokerDatabaseMigrationApiAndWorkersAsTheCodeExpects() throws {
        let compose = try Self.yamlMap("deploy/compose.yaml")
        let services = Self.map(compose["services"])
        #expect(Set(services.keys) == ["rabbitmq", "postgres", "migrate", "api", "worker", "proxy", "apns-sim"])

        // The broker: management image, Herald's definitions file loaded at boot.
        let rabbitmq = Self.map(services["rabbitmq"])
        #expect((rabbitmq["image"] as? String)?.hasSuffix("-management") == true)
        let mounts = Self.strings(rabbitmq["volumes"])
        #expect(mounts.contains { $0.hasPrefix("./rabbitmq/definitions.json:/etc/rabbitmq/definitions.d/") })
        let rabbitConf = try Self.read("deploy/compose/rabbitmq.conf")
        #expect(rabbitConf.contains("load_definitions = /etc/rabbitmq/definitions.d"))
        // The broker refuses what no worker would read, with room for a parked copy's headers.
        let maxMessage = rabbitConf.split(separator: "\n").first { $0.hasPrefix("max_message_size = ") }
            .flatMap { Int($0.dropFirst("max_message_size = ".count)) }
        let workerLimit = 1 << 20  // worker.max_message_bytes by default
        #expect(
            maxMessage.map { (workerLimit * 2...(64 << 20)).contains($0) } == true,
            "max_message_size \(maxMessage ?? 0)")
        // Committed files exist; the private ones (passwords, hashes, keys) are what deploy/compose/secrets.sh writes.
        let secretsScript = try Self.read("deploy/compose/secrets.sh")
        for mount in mounts where mount.hasPrefix("./") {
            let source = String(mount.dropFirst(2).prefix { $0 != ":" })
            if source.hasPrefix(Self.composePrivate) {
                #expect(secretsScript.contains(source.dropFirst(Self.composePrivate.count)), "\(source) is not made")
            } else {
                #expect(FileManager.default.fileExists(atPath: Self.root + "/deploy/" + source), "missing \(source)")
            }
        }
        let userNames = try Self.composeBrokerUsers().map { $0["name"] as? String ?? "" }
        #expect(userNames == ["herald-worker", "herald-api", "herald-admin"])

        let image = "herald:latest"
        for name in ["migrate", "api", "worker", "apns-sim"] {
            #expect(Self.map(services[name])["image"] as? String == image, "\(name) image")
        }
        let build = Self.map(Self.map(services["migrate"])["build"])
        #expect(build["dockerfile"] as? String == "deploy/Dockerfile")
        #expect(FileManager.default.fileExists(atPath: Self.root + "/deploy/Dockerfile"))

        // Every herald command line names a real subcommand and real flags; every HERALD_* variable is read.
        for name in ["migrate", "api", "worker", "apns-sim"] {
            let service = Self.map(services[name])
            try Self.expectValidCommand(Self.strings(service["command"]), in: "compose \(name)")
            try Self.expectKnownEnvironment(Self.map(service["environment"]).keys, in: "compose \(name)")
        }
        #expect(
            Self.map(Self.map(Self.map(services["migrate"])["depends_on"])["postgres"])["condition"] as? String
                == "service_healthy")
        for name in ["api", "worker"] {
            let dependencies = Self.map(Self.map(services[name])["depends_on"])
            #expect(Self.map(dependencies["migrate"])["condition"] as? String == "service_completed_successfully")
            #expect(Self.map(dependencies["rabbitmq"])["condition"] as? String == "service_healthy")
        }

        // Workers: replicas, drain time, the metrics port and readiness path the code serves.
        let worker = Self.map(services["worker"])
        #expect((Self.map(worker["deploy"])["replicas"] as? Int ?? 0) >= 2)
        #expect(Self.strings(worker["command"]).contains("quorum"))
        #expect(Self.seconds(worker["stop_grace_period"]) >= 60)
        let workerEnvironment = Self.map(worker["environment"])
        #expect(workerEnvironment["HERALD_METRICS_PORT"] as? String == String(try Self.workerMetricsPort()))
        #expect(Self.strings(worker["expose"]) == [String(try Self.workerMetricsPort())])
        try Self.expectHealthcheck(worker, port: try Self.workerMetricsPort())

        let api = Self.map(services["api"])
        let apiEnvironment = Self.map(api["environment"])
        #expect(apiEnvironment["HERALD_API_PORT"] as? String == String(try Self.apiPort()))
        #expect(apiEnvironment["HERALD_API_HOST"] as? String == "0.0.0.0")
        try Self.expectHealthcheck(api, port: try Self.apiPort())
        #expect(Self.map(services["rabbitmq"])["healthcheck"] != nil)
        #expect(Self.map(services["postgres"])["healthcheck"] != nil)

        // The simulator only under the sim profile; the compose apps file points at it and parses as an apps file.
        let simulator = Self.map(services["apns-sim"])
        #expect(Self.strings(simulator["profiles"]) == ["sim"])
        let apps = try AppsFile.parse(Data(try Self.read("deploy/compose/apps.json").utf8))
        #expect(apps.apps.first?.endpoint == "https://apns-sim:2197")
    }

    // MARK: Kubernetes

    @Test func kubernetesDeploymentsProbeTheRealHealthEndpointsAndDrainWithinTheGracePeriod() throws {
        let kustomization = try Self.yamlMap("deploy/k8s/kustomization.yaml")
        let resources = Self.strings(kustomization["resources"])
        var documents: [[String: Any]] = []
        for resource in resources {
            documents += try Self.yamlDocuments("deploy/k8s/" + resource)
        }
        #expect(Self.map((kustomization["images"] as? [Any])?.first)["name"] as? String == "herald")
        func objects(_ kind: String) -> [[String: Any]] { documents.filter { $0["kind"] as? String == kind } }
        func named(_ kind: String, _ name: String) -> [String: Any]? {
            objects(kind).first { Self.map($0["metadata"])["name"] as? String == name }
        }

        let secretDocuments = try Self.yamlDocuments("deploy/k8s/secret-example.yaml")
        var secretKeys: [String: Set<String>] = [:]
        for secret in secretDocuments {
            secretKeys[Self.map(secret["metadata"])["name"] as? String ?? ""] = Set(Self.map(secret["stringData"]).keys)
        }

        let paths = try Self.healthPaths()
        for (name, port) in [("herald-worker", try Self.workerMetricsPort()), ("herald-api", try Self.apiPort())] {
            let deployment = try #require(named("Deployment", name), "no Deployment \(name)")
            let template = Self.map(Self.map(deployment["spec"])["template"])
            let podSpec = Self.map(template["spec"])
            let container = Self.map((podSpec["containers"] as? [Any])?.first)
            #expect(container["image"] as? String == "herald")
            try Self.expectValidCommand(Self.strings(container["args"]), in: name)
            #expect(Self.strings(container["args"]).contains("quorum"), "\(name) must use the quorum queues")

            let ports = (container["ports"] as? [Any] ?? []).map(Self.map)
            let containerPort = try #require(ports.first)
            #expect(containerPort["containerPort"] as? Int == port)
            let portName = containerPort["name"] as? String
            #expect(Self.map(Self.map(container["livenessProbe"])["httpGet"])["path"] as? String == paths.live)
            #expect(Self.map(Self.map(container["readinessProbe"])["httpGet"])["path"] as? String == paths.ready)
            #expect(Self.map(Self.map(container["livenessProbe"])["httpGet"])["port"] as? String == portName)
            #expect(Self.map(Self.map(container["readinessProbe"])["httpGet"])["port"] as? String == portName)

            var environment: [String: Any] = [:]
            for entry in (container["env"] as? [Any] ?? []).map(Self.map) {
                let variable = entry["name"] as? String ?? ""
                environment[variable] = entry["value"] ?? ""
                let reference = Self.map(Self.map(entry["valueFrom"])["secretKeyRef"])
                if let secret = reference["name"] as? String, let key = reference["key"] as? String {
                    #expect(
                        secretKeys[secret]?.contains(key) == true,
                        "\(name): \(secret)/\(key) is not in secret-example.yaml")
                }
            }
            try Self.expectKnownEnvironment(environment.keys, in: name)
            #expect(environment["HERALD_AMQP_URL"] != nil && environment["HERALD_DATABASE_URL"] != nil)
            let portVariable = name == "herald-worker" ? "HERALD_METRICS_PORT" : "HERALD_API_PORT"
            #expect(environment[portVariable] as? String == String(port))

            let resourcesSpec = Self.map(container["resources"])
            #expect(
                Self.map(resourcesSpec["requests"])["cpu"] != nil && Self.map(resourcesSpec["limits"])["memory"] != nil)
            #expect(Self.map(Self.map(container["lifecycle"])["preStop"]).isEmpty == false)
            let grace = podSpec["terminationGracePeriodSeconds"] as? Int ?? 30
            #expect(grace >= (name == "herald-worker" ? 60 : 20))
            #expect(Self.map(podSpec["securityContext"])["runAsNonRoot"] as? Bool == true)

            // A PodDisruptionBudget and a Service (or, for workers, a metrics Service) select these pods.
            let labels = Self.map(Self.map(template["metadata"])["labels"])
            let budget = objects("PodDisruptionBudget").first {
                Self.selects(Self.map(Self.map(Self.map($0["spec"])["selector"])["matchLabels"]), labels)
            }
            #expect(budget != nil, "no PodDisruptionBudget for \(name)")
            let service = objects("Service").first { Self.selects(Self.map(Self.map($0["spec"])["selector"]), labels) }
            let servicePort = Self.map((Self.map(service?["spec"])["ports"] as? [Any])?.first)
            #expect(servicePort["targetPort"] as? String == portName, "no Service for \(name)")

            if name == "herald-worker" {
                let volumes = (podSpec["volumes"] as? [Any] ?? []).map(Self.map)
                let configMap = Self.map(volumes.first { $0["configMap"] != nil }?["configMap"])["name"] as? String
                let apps = try #require(named("ConfigMap", configMap ?? ""), "the apps ConfigMap")
                let appsJSON = try #require(Self.map(apps["data"])["apps.json"] as? String)
                #expect(try AppsFile.parse(Data(appsJSON.utf8)).apps.isEmpty == false)
                let mount = (container["volumeMounts"] as? [Any] ?? []).map(Self.map)
                #expect(mount.contains { $0["mountPath"] as? String == environment["HERALD_APPS_FILE"] as? String })
                let secretVolume = Self.map(volumes.first { $0["secret"] != nil }?["secret"])["secretName"] as? String
                #expect(secretKeys[secretVolume ?? ""] != nil, "the APNs credentials Secret")
            }
        }

        // KEDA scales the worker Deployment on exactly herald.jobs + herald.batches.
        let scaled = try #require(objects("ScaledObject").first)
        let spec = Self.map(scaled["spec"])
        #expect(Self.map(spec["scaleTargetRef"])["name"] as? String == "herald-worker")
        let trigger = Self.map((spec["triggers"] as? [Any])?.first)
        #expect(trigger["type"] as? String == "rabbitmq")
        let metadata = Self.map(trigger["metadata"])
        #expect(metadata["mode"] as? String == "QueueLength" && metadata["operation"] as? String == "sum")
        let pattern = try NSRegularExpression(pattern: try #require(metadata["queueName"] as? String))
        let topology = Topology(queueType: .quorum)
        let matched = topology.queues.map(\.name).filter {
            pattern.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil
        }
        #expect(matched == [topology.jobs, topology.batches])
        let authentication = try #require(objects("TriggerAuthentication").first)
        let reference = Self.map((Self.map(authentication["spec"])["secretTargetRef"] as? [Any])?.first)
        #expect(secretKeys[reference["name"] as? String ?? ""]?.contains(reference["key"] as? String ?? "") == true)

        let migrate = try #require(objects("Job").first)
        let migrateContainer = Self.map(
            (Self.map(Self.map(Self.map(migrate["spec"])["template"])["spec"])["containers"] as? [Any])?.first)
        try Self.expectValidCommand(Self.strings(migrateContainer["args"]), in: "migrate Job")
    }

    // MARK: systemd

    @Test func systemdUnitsRunHeraldWithARestartPolicyAndTimeToDrainOnSIGTERM() throws {
        for (file, subcommand, minimumStop) in [
            ("herald-worker@.service", "worker", 60), ("herald-api.service", "api", 10),
            ("herald-migrate.service", "migrate", 0),
        ] {
            let unit = try Self.unit("deploy/systemd/" + file)
            let exec = try #require(unit["ExecStart"]).split(separator: " ").map(String.init)
            #expect(exec.first == "/usr/local/bin/herald")
            #expect(exec.dropFirst().first == subcommand)
            try Self.expectValidCommand(Array(exec.dropFirst()), in: file)
            #expect(unit["User"] == "herald")
            if minimumStop > 0 {
                #expect(unit["KillSignal"] == "SIGTERM")
                #expect(["always", "on-failure"].contains(unit["Restart"] ?? ""))
                #expect(Int(unit["TimeoutStopSec"] ?? "0") ?? 0 >= minimumStop)
                #expect(exec.contains("quorum"))
            }
        }
        let worker = try Self.unit("deploy/systemd/herald-worker@.service")
        #expect(worker["ExecStart"]?.contains("--metrics-port %i") == true)
        for example in ["herald.env.example", "worker.env.example", "api.env.example"] {
            let environment = try Self.envFile("deploy/systemd/" + example).keys
            try Self.expectKnownEnvironment(environment, in: example)
        }
    }

    // MARK: Safe defaults: least-privilege broker users, secrets out of the repository, TLS in front of the API

    @Test func composeServicesLogInAsTheirOwnBrokerUsersWhoMayUseHeraldsNamesAndNothingElse() throws {
        let users = try Self.composeBrokerUsers()
        let services = Self.map(try Self.yamlMap("deploy/compose.yaml")["services"])
        var serviceUsers: [String] = []
        for name in ["worker", "api"] {
            let url = Self.map(Self.map(services[name])["environment"])["HERALD_AMQP_URL"] as? String ?? ""
            let login = try #require(Self.credentials(in: url).first, "compose \(name): no user in its AMQP URL")
            serviceUsers.append(login.user)
            let user = try #require(users.first { $0["name"] as? String == login.user }, "no broker user \(login.user)")
            // No tag at all: not administrator, not management (no HTTP API, no UI).
            #expect(Self.strings(user["tags"]).isEmpty, "compose \(name) logs in as \(login.user), which has tags")
            // The URL's password is the variable the users file hashes for this user.
            let variable = Self.reference(login.password)
            #expect(variable != nil, "compose \(name): the AMQP password is not a variable")
            #expect(
                user["password_hash"] as? String == "@\(variable ?? "")@", "compose \(name): password of another user")
        }
        #expect(Set(serviceUsers).count == serviceUsers.count, "the worker and the API share a broker user")
        for user in users {
            #expect(!Self.strings(user["tags"]).contains("administrator"), "\(user["name"] ?? "") is an administrator")
        }

        let permissions = try #require(Self.map(try Self.composeBrokerDefinitions())["permissions"] as? [Any])
        #expect(
            Set(permissions.compactMap { Self.map($0)["user"] as? String })
                == Set(users.compactMap { $0["name"] as? String }))
        for permission in permissions.map(Self.map) where permission["user"] as? String != "herald-api" {
            try Self.expectConfinedToHerald(permission, of: permission["user"] as? String ?? "")
        }
    }

    /// The API publishes jobs and nothing else: its broker user may use the jobs exchange and queue (declare them,
    /// bind them, publish through the exchange) and no other name, not the default exchange (which reaches every
    /// queue, the webhooks queue among them) nor `herald.events` (whose events webhooks would sign), in compose,
    /// Kubernetes and systemd alike; and the API publishes through that exchange.
    @Test func theAPIsBrokerUserMayPublishToTheJobsExchangeAndNothingElseInEveryDeployFile() throws {
        let compose = try #require(Self.map(try Self.composeBrokerDefinitions())["permissions"] as? [Any])
        let api = try #require(compose.map(Self.map).first { $0["user"] as? String == "herald-api" })
        try Self.expectOnlyJobs(api, of: "compose herald-api")
        for path in ["deploy/k8s/secret-example.yaml", "deploy/systemd/api.env.example"] {
            let granted = Self.captures(
                #"set_permissions -p / herald-api '([^']*)' '([^']*)' '([^']*)'"#, in: try Self.read(path))
            #expect(granted.count == 1, "\(path): herald-api's set_permissions")
            for fields in granted {
                try Self.expectOnlyJobs(
                    ["configure": fields[0], "write": fields[1], "read": fields[2]], of: "\(path) herald-api")
            }
        }
        // The code publishes where the permission allows: the jobs exchange, declared and bound by the API itself.
        let source = try Self.read("Sources/HeraldAPI/API.swift")
        #expect(source.contains("producer.exchange = configuration.topology.jobs"))
        #expect(source.contains("topology.declareJobs(on:") && !source.contains("topology.declare(on:"))
    }

    @Test func composePublishesOnlyTheTLSProxyBeyondLoopbackAndTheProxyIsTheAPIsOnlyWayIn() throws {
        let services = Self.map(try Self.yamlMap("deploy/compose.yaml")["services"])
        let apiPort = try Self.apiPort()
        for (name, service) in services {
            for published in Self.publishedPorts(Self.map(service)) where published.hostIP != "127.0.0.1" {
                // Beyond this host, the proxy's TLS port and nothing else.
                #expect(name == "proxy", "compose \(name) publishes \(published.container) on every interface")
            }
        }
        let broker = Self.publishedPorts(Self.map(services["rabbitmq"]))
        #expect(Set(broker.map(\.container)) == [5672, 15672])
        #expect(broker.allSatisfy { $0.hostIP == "127.0.0.1" })
        #expect(Self.publishedPorts(Self.map(services["postgres"])).isEmpty, "PostgreSQL is published")
        let api = Self.map(services["api"])
        #expect(Self.publishedPorts(api).isEmpty, "the API is published without TLS")
        #expect(Self.strings(api["expose"]) == [String(apiPort)])

        let proxy = Self.map(services["proxy"])
        let proxyPorts = Self.publishedPorts(proxy)
        #expect(proxyPorts.count == 1)
        let mounts = Self.strings(proxy["volumes"])
        let caddyfileMount = try #require(mounts.first { $0.hasSuffix(":/etc/caddy/Caddyfile:ro") })
        let site = try Self.caddySite("deploy/" + caddyfileMount.dropFirst(2).prefix { $0 != ":" })
        #expect(site.addresses.count == 1)
        for address in site.addresses {
            #expect(address.hasPrefix("https://") && address.hasSuffix(":\(proxyPorts.first?.container ?? 0)"))
        }
        // The certificate and key come from the mounted private directory, never from the image or the repository.
        let tlsMount = try #require(mounts.first { $0.hasPrefix("./" + Self.composePrivate + "tls:") })
        let tlsDirectory = tlsMount.split(separator: ":")[1]
        #expect(site.certificateFiles.count == 2)
        #expect(site.certificateFiles.allSatisfy { $0.hasPrefix(tlsDirectory + "/") })
        #expect(!site.upstreams.isEmpty && site.upstreams.allSatisfy { $0 == "api:\(apiPort)" })
        #expect(!site.paths.contains("/metrics") && !site.paths.contains("/*") && site.paths.contains("/v1/*"))
    }

    @Test func composeTakesEverySecretFromAnIgnoredEnvFileThatItsExampleListsAndItsScriptFills() throws {
        let compose = try Self.read("deploy/compose.yaml")
        let used = Set(Self.captures(#"\$\{([A-Za-z_][A-Za-z0-9_]*)"#, in: compose).map { $0[0] })
        let example = try Self.envFile("deploy/compose/secrets.env.example")
        #expect(!used.isEmpty)
        // The broker users' passwords are hashed into the users file (`@NAME@` in its template), not given to compose.
        let hashed = Set(
            Self.captures(#"@([A-Z_]+)@"#, in: try Self.read("deploy/compose/rabbitmq-users.template.json")).map {
                $0[0]
            })
        #expect(
            used.union(hashed) == Set(example.keys),
            "compose and the users file use \(used.union(hashed).sorted()), the example lists \(example.keys.sorted())")
        let script = try Self.read("deploy/compose/secrets.sh")
        for (name, value) in example {
            #expect(script.contains("ensure \(name) "), "secrets.sh does not fill \(name)")
            if name.contains("PASSWORD") { #expect(value == "CHANGE-ME", "\(name) has a value in the example") }
        }
        // Every password a service is given is a variable from that file.
        for (name, service) in Self.map(try Self.yamlMap("deploy/compose.yaml")["services"]) {
            for (key, value) in Self.map(Self.map(service)["environment"]) {
                let text = "\(value)"
                if key.contains("PASSWORD") { #expect(Self.reference(text) != nil, "compose \(name): \(key) literal") }
                for login in Self.credentials(in: text) {
                    #expect(Self.reference(login.password) != nil, "compose \(name): \(key) holds a password")
                }
            }
        }
        // The real file and everything secrets.sh writes are ignored by git; the example and template are not.
        for path in ["secrets.env", "rabbitmq-users.json", "tls/cert.pem", "tls/key.pem"] {
            #expect(script.contains(path.split(separator: "/").last!), "secrets.sh does not write \(path)")
            #expect(try Self.gitIgnores("deploy/" + Self.composePrivate + path), "\(path) is not git-ignored")
        }
        for path in ["deploy/compose/secrets.env.example", "deploy/compose/rabbitmq-users.template.json"] {
            #expect(try !Self.gitIgnores(path), "\(path) is git-ignored")
        }
    }

    @Test func noDeployFileInTheRepositoryHoldsAPasswordOnlyReferencesAndPlaceholders() throws {
        let files = try Self.git(
            [
                "ls-files", "--cached", "--others", "--exclude-standard", "--", "deploy/compose.yaml", "deploy/compose",
                "deploy/k8s", "deploy/systemd", "deploy/rabbitmq",
            ]
        ).split(separator: "\n").map(String.init)
        #expect(files.contains("deploy/compose.yaml") && files.contains("deploy/k8s/secret-example.yaml"))
        for file in files where FileManager.default.fileExists(atPath: Self.root + "/" + file) {
            let text = try Self.read(file)
            for login in Self.credentials(in: text) {
                #expect(Self.isPlaceholder(login.password), "\(file): a password for \(login.user) in a URL")
            }
            // `password: x`, `POSTGRES_PASSWORD=x`, `"password_hash": "x"`: only references and placeholders.
            let assignments = Self.captures(
                #"(?i)(?<![{\w])[a-z_]*passw(?:or)?d[a-z_]*["']?[ \t]*[:=][ \t]*["']?([^\s"',}]*)"#, in: text)
            for value in assignments.map({ $0[0] }) {
                #expect(Self.isPlaceholder(value), "\(file): a password literal (\(value.prefix(3))…)")
            }
        }
        // The Kubernetes example Secrets are placeholders through and through.
        for secret in try Self.yamlDocuments("deploy/k8s/secret-example.yaml") {
            for (key, value) in Self.map(secret["stringData"]) {
                #expect("\(value)".contains("CHANGE-ME"), "secret-example.yaml: \(key) has a value")
            }
        }
    }

    @Test func kubernetesKeepsCredentialsInSecretsRunsLockedDownAndServesTheAPIOnlyThroughATLSIngress() throws {
        let resources = Self.strings(try Self.yamlMap("deploy/k8s/kustomization.yaml")["resources"])
        var documents: [[String: Any]] = []
        for resource in resources { documents += try Self.yamlDocuments("deploy/k8s/" + resource) }
        #expect(!documents.contains { $0["kind"] as? String == "Secret" }, "a Secret is applied from the repository")
        let examples = try Self.yamlDocuments("deploy/k8s/secret-example.yaml")
        func example(_ name: String) -> [String: Any] {
            Self.map(examples.first { Self.map($0["metadata"])["name"] as? String == name }?["stringData"])
        }

        var amqpKeys: [String: String] = [:]
        for document in documents where ["Deployment", "Job"].contains(document["kind"] as? String ?? "") {
            let name = Self.map(document["metadata"])["name"] as? String ?? ""
            let podSpec = Self.map(Self.map(Self.map(document["spec"])["template"])["spec"])
            #expect(podSpec["automountServiceAccountToken"] as? Bool == false, "\(name) mounts an API token")
            let podSecurity = Self.map(podSpec["securityContext"])
            #expect(podSecurity["runAsNonRoot"] as? Bool == true && (podSecurity["runAsUser"] as? Int ?? 0) > 0)
            #expect(Self.map(podSecurity["seccompProfile"])["type"] as? String == "RuntimeDefault", "\(name) seccomp")
            let volumes = (podSpec["volumes"] as? [Any] ?? []).map(Self.map)
            for container in (podSpec["containers"] as? [Any] ?? []).map(Self.map) {
                let security = Self.map(container["securityContext"])
                #expect(security["readOnlyRootFilesystem"] as? Bool == true, "\(name): writable root file system")
                #expect(security["allowPrivilegeEscalation"] as? Bool == false, "\(name): privilege escalation")
                #expect(Self.strings(Self.map(security["capabilities"])["drop"]) == ["ALL"], "\(name) capabilities")
                for entry in (container["env"] as? [Any] ?? []).map(Self.map) {
                    let variable = entry["name"] as? String ?? ""
                    let reference = Self.map(Self.map(entry["valueFrom"])["secretKeyRef"])
                    if variable.hasSuffix("_URL") || variable.contains("PASSWORD") {
                        #expect(entry["value"] == nil && reference["key"] != nil, "\(name): \(variable) inline")
                    }
                    if variable == "HERALD_AMQP_URL" { amqpKeys[name] = reference["key"] as? String }
                    guard variable == "HERALD_DATABASE_URL", let key = reference["key"] as? String else { continue }
                    // PostgreSQL over TLS, checked against a CA file that a mounted Secret provides.
                    let url = try #require(
                        URLComponents(string: "\(example(reference["name"] as? String ?? "")[key] ?? "")"))
                    let query = Dictionary(
                        (url.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
                    #expect(query["sslmode"] == "verify-full", "\(name): the database URL is not verify-full")
                    let rootCertificate = query["sslrootcert"] ?? ""
                    let directory = (rootCertificate as NSString).deletingLastPathComponent
                    let mount = (container["volumeMounts"] as? [Any] ?? []).map(Self.map).first {
                        $0["mountPath"] as? String == directory
                    }
                    let volume = volumes.first { $0["name"] as? String == mount?["name"] as? String }
                    let secret = Self.map(volume?["secret"])["secretName"] as? String ?? ""
                    #expect(
                        example(secret)[(rootCertificate as NSString).lastPathComponent] != nil,
                        "\(name): sslrootcert \(rootCertificate) is not in a mounted Secret")
                }
            }
        }
        #expect(amqpKeys["herald-worker"] != nil && amqpKeys["herald-api"] != nil)
        #expect(amqpKeys["herald-worker"] != amqpKeys["herald-api"], "the worker and the API share a broker user")
        let workerLogin = Self.credentials(in: "\(example("herald-urls")[amqpKeys["herald-worker"] ?? ""] ?? "")")
        let apiLogin = Self.credentials(in: "\(example("herald-urls")[amqpKeys["herald-api"] ?? ""] ?? "")")
        #expect(workerLogin.first?.user != nil && workerLogin.first?.user != apiLogin.first?.user)

        // Nothing is exposed outside the cluster but through the Ingress, and that only over TLS.
        let services = documents.filter { $0["kind"] as? String == "Service" }
        for service in services {
            let type = Self.map(service["spec"])["type"] as? String ?? "ClusterIP"
            #expect(type == "ClusterIP", "Service \(Self.map(service["metadata"])["name"] ?? "") is \(type)")
        }
        let apiService = try #require(services.first { Self.map($0["metadata"])["name"] as? String == "herald-api" })
        let apiPortName = Self.map((Self.map(apiService["spec"])["ports"] as? [Any])?.first)["name"] as? String
        let ingress = try #require(documents.first { $0["kind"] as? String == "Ingress" }, "no Ingress")
        let spec = Self.map(ingress["spec"])
        let tls = (spec["tls"] as? [Any] ?? []).map(Self.map)
        #expect(!tls.isEmpty && tls.allSatisfy { ($0["secretName"] as? String)?.isEmpty == false })
        let tlsHosts = Set(tls.flatMap { Self.strings($0["hosts"]) })
        let rules = (spec["rules"] as? [Any] ?? []).map(Self.map)
        #expect(!rules.isEmpty)
        for rule in rules {
            #expect(tlsHosts.contains(rule["host"] as? String ?? ""), "Ingress host without TLS")
            for path in (Self.map(rule["http"])["paths"] as? [Any] ?? []).map(Self.map) {
                #expect(
                    ["/v1", "/health"].contains(path["path"] as? String ?? ""), "Ingress routes \(path["path"] ?? "")")
                let backend = Self.map(Self.map(path["backend"])["service"])
                #expect(backend["name"] as? String == "herald-api")
                #expect(Self.map(backend["port"])["name"] as? String == apiPortName)
            }
        }
    }

    @Test func systemdUnitsRunSandboxedAsHeraldWithPrivateEnvironmentFilesAndTheAPIOnLoopbackBehindTLS() throws {
        var environmentFiles: [String: [String]] = [:]
        for file in ["herald-worker@.service", "herald-api.service", "herald-migrate.service"] {
            let unit = try Self.unitValues("deploy/systemd/" + file)
            let user = unit["User"]?.last ?? ""
            #expect(!user.isEmpty && user != "root" && user != "0", "\(file) runs as root")
            for (option, value) in Self.systemdHardening {
                #expect(unit[option]?.last == value, "\(file): \(option)=\(value) missing")
            }
            let files = unit["EnvironmentFile"] ?? []
            environmentFiles[file] = files
            for path in files {
                #expect(path.hasPrefix("/etc/herald/"), "\(file): \(path)")
                // Each file has an example that says who may read it.
                let example = try Self.read("deploy/systemd/" + (path as NSString).lastPathComponent + ".example")
                #expect(example.hasPrefix("# \(path) (mode 0640, owner root:herald)"), "\(path): no mode")
            }
        }
        #expect(environmentFiles["herald-worker@.service"] == ["/etc/herald/herald.env", "/etc/herald/worker.env"])
        #expect(environmentFiles["herald-api.service"] == ["/etc/herald/herald.env", "/etc/herald/api.env"])
        #expect(environmentFiles["herald-migrate.service"] == ["/etc/herald/herald.env"])

        let common = try Self.envFile("deploy/systemd/herald.env.example")
        #expect(common["HERALD_AMQP_URL"] == nil, "a broker URL shared by every service")
        let logins = try ["worker", "api"].map {
            try Self.credentials(in: Self.envFile("deploy/systemd/\($0).env.example")["HERALD_AMQP_URL"] ?? "")
        }
        #expect(logins.allSatisfy { $0.count == 1 } && logins[0].first?.user != logins[1].first?.user)

        let database = try #require(URLComponents(string: common["HERALD_DATABASE_URL"] ?? ""))
        let query = Dictionary((database.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        #expect(query["sslmode"] == "verify-full" && query["sslrootcert"]?.hasPrefix("/etc/herald/") == true)

        let apiPort = try Self.apiPort()
        #expect(common["HERALD_API_HOST"] == "127.0.0.1", "the API listens beyond loopback")
        #expect(common["HERALD_API_PORT"] == String(apiPort))
        let site = try Self.caddySite("deploy/systemd/Caddyfile")
        #expect(!site.addresses.isEmpty && site.addresses.allSatisfy { $0.hasPrefix("https://") })
        #expect(site.certificateFiles.count == 2)
        #expect(!site.upstreams.isEmpty && site.upstreams.allSatisfy { $0 == "127.0.0.1:\(apiPort)" })
        #expect(!site.paths.contains("/metrics") && site.paths.contains("/v1/*"))
    }

    // MARK: RabbitMQ, Prometheus, Grafana

    @Test func theDefinitionsFileHoldsExactlyTheQuorumTopologyTheWorkerDeclares() throws {
        let file = try JSONSerialization.jsonObject(with: Data(try Self.read("deploy/rabbitmq/definitions.json").utf8))
        let exported = try JSONSerialization.jsonObject(with: Data(Topology(queueType: .quorum).definitionsJSON().utf8))
        #expect(NSDictionary(dictionary: Self.map(file)) == NSDictionary(dictionary: Self.map(exported)))
        let names = (Self.map(file)["queues"] as? [Any] ?? []).compactMap { Self.map($0)["name"] as? String }
        let topology = Topology()
        #expect(Set(names) == Set(topology.queues.map(\.name)))
        #expect(names.contains(topology.webhooks) && names.contains(topology.webhooksParked))
        // The webhook queues are bounded, in their arguments and by policies that reach queues declared before.
        for queue in (Self.map(file)["queues"] as? [Any] ?? []).map(Self.map)
        where [topology.webhooks, topology.webhooksParked].contains(queue["name"] as? String) {
            let arguments = Self.map(queue["arguments"])
            #expect((arguments["x-max-length"] as? Int ?? 0) > 0 && arguments["x-overflow"] as? String == "drop-head")
        }
        let policies = (Self.map(file)["policies"] as? [Any] ?? []).map(Self.map)
        for queue in [topology.webhooks, topology.webhooksParked] {
            let policy = try #require(
                policies.first { policy in
                    let pattern = policy["pattern"] as? String ?? ""
                    return (try? NSRegularExpression(pattern: pattern))?.firstMatch(
                        in: queue, range: NSRange(queue.startIndex..., in: queue)) != nil
                }, "no policy bounds \(queue)")
            #expect(Self.map(policy["definition"])["max-length"] as? Int ?? 0 > 0)
        }
        // The jobs exchange the API publishes through, bound to the jobs queue.
        let bindings = (Self.map(file)["bindings"] as? [Any] ?? []).map(Self.map)
        #expect(
            bindings.contains {
                $0["source"] as? String == topology.jobs && $0["destination"] as? String == topology.jobs
                    && $0["routing_key"] as? String == topology.jobs
            })
    }

    @Test func prometheusScrapesTheMetricsPathOnTheWorkerAndApiPorts() throws {
        let configuration = try Self.yamlMap("deploy/prometheus/prometheus.yml")
        let jobs = (configuration["scrape_configs"] as? [Any] ?? []).map(Self.map)
        let metricsPath = try Self.metricsPath()
        for job in jobs where (job["job_name"] as? String)?.hasPrefix("herald") == true {
            #expect(job["metrics_path"] as? String == metricsPath)
        }
        let text = try Self.read("deploy/prometheus/prometheus.yml")
        let worker = jobs.first { $0["job_name"] as? String == "herald-worker" }
        let workerPort = Self.map((worker?["dns_sd_configs"] as? [Any])?.first)["port"] as? Int
        #expect(workerPort == (try Self.workerMetricsPort()))
        #expect(text.contains("api:\(try Self.apiPort())"))
    }

    @Test func everyMetricTheDashboardQueriesIsOneTheCodeExportsAndEveryExportedMetricIsShown() throws {
        let dashboard = Self.map(
            try JSONSerialization.jsonObject(with: Data(try Self.read("deploy/grafana/herald-dashboard.json").utf8)))
        let panels = (dashboard["panels"] as? [Any] ?? []).map(Self.map)
        #expect(Set(panels.compactMap { $0["id"] as? Int }).count == panels.count)
        let expressions = panels.flatMap {
            ($0["targets"] as? [Any] ?? []).compactMap { Self.map($0)["expr"] as? String }
        }
        #expect(!expressions.isEmpty)

        let exported = try Self.exportedMetrics()
        let pattern = try NSRegularExpression(pattern: #"\b(herald|apns|fcm|webpush)_[a-z_]+"#)
        var queried = Set<String>()
        for expression in expressions {
            for match in pattern.matches(in: expression, range: NSRange(expression.startIndex..., in: expression)) {
                var name = String(expression[Range(match.range, in: expression)!])
                for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) && !exported.contains(name) {
                    name = String(name.dropLast(suffix.count))
                }
                queried.insert(name)
            }
        }
        #expect(queried.subtracting(exported).isEmpty, "queried but not exported: \(queried.subtracting(exported))")
        #expect(exported.subtracting(queried).isEmpty, "exported but on no panel: \(exported.subtracting(queried))")
        // Labels the panels group by are dimensions the code sets.
        let sources = try Self.sources()
        for label in ["outcome", "reason", "state", "status", "route"] {
            #expect(sources.contains("(\"\(label)\","), "no dimension \(label) in the code")
        }
    }

    // MARK: Reading the code

    static let executableProduct = "herald"

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: root + "/" + path, encoding: .utf8)
    }

    /// Every Swift source file under Sources/, concatenated.
    static func sources(under folder: String = "Sources") throws -> String {
        let base = root + "/" + folder
        let files = FileManager.default.enumerator(atPath: base)?.compactMap { $0 as? String } ?? []
        return try files.filter { $0.hasSuffix(".swift") }.sorted()
            .map { try String(contentsOfFile: base + "/" + $0, encoding: .utf8) }.joined(separator: "\n")
    }

    /// The modules whose code is only the `herald` executable's: its commands and what they share.
    static let executableModules = ["HeraldCLI", "HeraldCommandLine", "HeraldBench", "HeraldDemo"]

    /// The `HERALD_*` variables the executable reads.
    static func knownEnvironment() throws -> Set<String> {
        let text = try executableModules.map { try sources(under: "Sources/" + $0) }.joined(separator: "\n")
        let pattern = try NSRegularExpression(pattern: #""(HERALD_[A-Z_]+)""#)
        return Set(
            pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                String(text[Range($0.range(at: 1), in: text)!])
            })
    }

    static func expectKnownEnvironment(
        _ names: some Sequence<String>, in place: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let known = try knownEnvironment()
        let herald = Set(names.filter { $0.hasPrefix("HERALD_") })
        #expect(
            herald.subtracting(known).isEmpty, "\(place): unknown \(herald.subtracting(known))",
            sourceLocation: sourceLocation)
    }

    /// The default port of `herald worker`'s metrics and health server, from `WorkerCommand`.
    static func workerMetricsPort() throws -> Int {
        try defaultPort(variable: "HERALD_METRICS_PORT")
    }

    /// The default port of `herald api`, from `ApiCommand`.
    static func apiPort() throws -> Int {
        try defaultPort(variable: "HERALD_API_PORT")
    }

    /// The default of the configuration key whose variable is `variable`, from the registry of keys.
    static func defaultPort(variable: String) throws -> Int {
        let file = "Sources/HeraldCommandLine/ConfigurationKey+Registry.swift"
        let text = try read(file)
        let start = try #require(text.range(of: "environment: \"\(variable)\""), "no key for \(variable) in \(file)")
        let rest = text[start.upperBound...]
        let value = try #require(rest.range(of: #"default: \.integer\(([0-9_]+)\)"#, options: .regularExpression))
        let digits = rest[value].filter(\.isNumber)
        return try #require(Int(digits), "no default port for \(variable) in \(file)")
    }

    /// The health paths `OperationsRoutes` serves.
    static func healthPaths() throws -> (live: String, ready: String) {
        let text = try read("Sources/HeraldOperations/OperationsRoutes.swift")
        #expect(text.contains("router.get(\"/health/live\")") && text.contains("router.get(\"/health/ready\")"))
        return ("/health/live", "/health/ready")
    }

    static func metricsPath() throws -> String {
        #expect(try read("Sources/HeraldOperations/OperationsRoutes.swift").contains("router.get(\"/metrics\")"))
        return "/metrics"
    }

    /// Every metric name created in the code (`Counter(label: "…"`, `Timer(label:`, `Meter(label:`, …).
    static func exportedMetrics() throws -> Set<String> {
        let text = try sources()
        let pattern = try NSRegularExpression(
            pattern: #"(?:Counter|Timer|Meter|Gauge|Recorder)\(\s*label: "([a-z_]+)""#)
        return Set(
            pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
                String(text[Range($0.range(at: 1), in: text)!])
            })
    }

    /// The subcommand name → the long flags it accepts, read from the `ParsableCommand`s of the executable's modules.
    static func commandFlags() throws -> [String: Set<String>] {
        let everything = try executableModules.map { try sources(under: "Sources/" + $0) }.joined(separator: "\n")
        let group = try NSRegularExpression(pattern: #"@OptionGroup var [A-Za-z]+: ([A-Za-z]+)"#)
        var seen: Set<String> = []
        /// The flags of an `@OptionGroup`'s type, and of the groups it holds in turn.
        func groupFlags(_ type: String) throws -> Set<String> {
            guard seen.insert(type).inserted else { return [] }
            defer { seen.remove(type) }
            guard let start = everything.range(of: "struct \(type): ") else { return [] }
            var body = String(everything[start.lowerBound...])
            if let end = body.range(of: "\n}\n") { body = String(body[..<end.upperBound]) }
            var flags = try optionFlags(in: body, type: nil)
            for match in group.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                flags.formUnion(try groupFlags(String(body[Range(match.range(at: 1), in: body)!])))
            }
            return flags
        }
        var commands: [String: Set<String>] = [:]
        for module in executableModules {
            let text = try sources(under: "Sources/" + module).replacingOccurrences(
                of: "\npackage struct ", with: "\nstruct ")
            for block in text.components(separatedBy: "\nstruct ").dropFirst() {
                let pattern = try NSRegularExpression(pattern: #"commandName: "([a-z-]+)""#)
                guard let match = pattern.firstMatch(in: block, range: NSRange(block.startIndex..., in: block)) else {
                    continue
                }
                let name = String(block[Range(match.range(at: 1), in: block)!])
                var flags = try optionFlags(in: "struct " + block, type: nil)
                let body = block.components(separatedBy: "\n}\n").first ?? block
                for match in group.matches(in: body, range: NSRange(body.startIndex..., in: body)) {
                    flags.formUnion(try groupFlags(String(body[Range(match.range(at: 1), in: body)!])))
                }
                commands[name] = flags.union(["--help"])
            }
        }
        return commands
    }

    /// The long names of the `@Option`/`@Flag` properties in `text` (of `type` only, if given).
    static func optionFlags(in text: String, type: String?) throws -> Set<String> {
        var body = text
        if let type, let start = text.range(of: "struct \(type)") {
            body = String(text[start.lowerBound...])
            if let end = body.range(of: "\n}\n") { body = String(body[..<end.upperBound]) }
        }
        var flags = Set<String>()
        var attribute: String?
        for line in body.split(separator: "\n").map(String.init) {
            if line.contains("@OptionGroup") { continue }
            if line.contains("@Option") || line.contains("@Flag") {
                attribute = line
            } else if attribute != nil {
                attribute! += line
            }
            guard let current = attribute, let varRange = line.range(of: "var ") else { continue }
            let name = line[varRange.upperBound...].prefix { $0.isLetter || $0.isNumber }
            if let custom = current.range(of: #"\.customLong\("([a-z-]+)"\)"#, options: .regularExpression) {
                flags.insert("--" + current[custom].dropFirst(".customLong(\"".count).dropLast(2))
            } else {
                flags.insert("--" + kebab(String(name)))
            }
            attribute = nil
        }
        return flags
    }

    /// ArgumentParser's default long name: `amqpURL` → `amqp-url`, `batchPrefetch` → `batch-prefetch`.
    static func kebab(_ name: String) -> String {
        var result = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || (previous.isUppercase && next?.isLowercase == true) { result += "-" }
            }
            result += character.lowercased()
        }
        return result
    }

    /// A `herald` argument list: its subcommand exists and every `--flag` is one of that subcommand's.
    static func expectValidCommand(
        _ arguments: [String], in place: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let commands = try commandFlags()
        let subcommand = try #require(arguments.first, "\(place): no subcommand", sourceLocation: sourceLocation)
        let flags = try #require(
            commands[subcommand], "\(place): no subcommand \(subcommand)", sourceLocation: sourceLocation)
        for argument in arguments.dropFirst() where argument.hasPrefix("--") {
            let flag = String(argument.prefix { $0 != "=" })
            #expect(
                flags.contains(flag), "\(place): herald \(subcommand) has no \(flag)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Parsing helpers

    static func map(_ value: Any?) -> [String: Any] {
        if let dictionary = value as? [String: Any] { return dictionary }
        if let dictionary = value as? [AnyHashable: Any] {
            var result: [String: Any] = [:]
            for (key, value) in dictionary { result["\(key.base)"] = value }
            return result
        }
        return [:]
    }

    static func strings(_ value: Any?) -> [String] {
        (value as? [Any] ?? []).map { "\($0)" }
    }

    static func yamlMap(_ path: String) throws -> [String: Any] {
        map(try Yams.load(yaml: try read(path)))
    }

    static func yamlDocuments(_ path: String) throws -> [[String: Any]] {
        var documents: [[String: Any]] = []
        for document in try Yams.load_all(yaml: try read(path)) { documents.append(map(document)) }
        return documents
    }

    /// Whether a selector's labels are all among a pod's labels.
    static func selects(_ selector: [String: Any], _ labels: [String: Any]) -> Bool {
        !selector.isEmpty && selector.allSatisfy { labels[$0.key] as? String == $0.value as? String }
    }

    /// `60s` / `1m30s` / `90` → seconds.
    static func seconds(_ value: Any?) -> Int {
        if let number = value as? Int { return number }
        let text = "\(value ?? "0")"
        var total = 0
        var digits = ""
        for character in text {
            if character.isNumber {
                digits.append(character)
                continue
            }
            let amount = Int(digits) ?? 0
            digits = ""
            total += character == "m" ? amount * 60 : character == "h" ? amount * 3600 : amount
        }
        return total + (Int(digits) ?? 0)
    }

    static func expectHealthcheck(
        _ service: [String: Any], port: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let test = strings(map(service["healthcheck"])["test"]).joined(separator: " ")
        #expect(test.contains("http://127.0.0.1:\(port)\(try healthPaths().ready)"), sourceLocation: sourceLocation)
    }

    /// Dockerfile instructions, with continuation lines joined and comments dropped.
    static func dockerfileInstructions() throws -> [String] {
        var instructions: [String] = []
        var current = ""
        for rawLine in try read("deploy/Dockerfile").split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if current.isEmpty && (line.hasPrefix("#") || line.isEmpty) { continue }
            if line.hasSuffix("\\") {
                current += line.dropLast() + " "
            } else {
                current += line
                instructions.append(current.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression))
                current = ""
            }
        }
        return instructions
    }

    /// `ENV A=1 B=2` pairs of every stage.
    static func dockerEnvironment(_ instructions: [String]) -> [String: String] {
        var environment: [String: String] = [:]
        for instruction in instructions where instruction.hasPrefix("ENV ") {
            for pair in instruction.dropFirst(4).split(separator: " ") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { environment[String(parts[0])] = String(parts[1]) }
            }
        }
        return environment
    }

    /// A systemd unit's `Key=Value` lines (the last value wins).
    static func unit(_ path: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in try read(path).split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    // MARK: Safe-default helpers

    /// The compose stack's private directory under `deploy/` (git-ignored; `deploy/compose/secrets.sh` fills it).
    static let composePrivate = "compose/private/"

    /// The unit options every Herald service runs with: no privilege, a read-only system, nothing of the host's.
    static let systemdHardening: [(option: String, value: String)] = [
        ("NoNewPrivileges", "yes"), ("CapabilityBoundingSet", ""), ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"), ("PrivateDevices", "yes"), ("ProtectKernelTunables", "yes"),
        ("ProtectKernelModules", "yes"), ("ProtectControlGroups", "yes"), ("RestrictNamespaces", "yes"),
        ("RestrictSUIDSGID", "yes"), ("LockPersonality", "yes"), ("UMask", "0077"),
    ]

    /// The broker definitions compose loads, before `secrets.sh` puts the password hashes in.
    static func composeBrokerDefinitions() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(try read("deploy/compose/rabbitmq-users.template.json").utf8))
    }

    static func composeBrokerUsers() throws -> [[String: Any]] {
        (map(try composeBrokerDefinitions())["users"] as? [Any] ?? []).map(map)
    }

    /// Every `scheme://user:password@` in `text`; a `${…}` password is taken whole.
    static func credentials(in text: String) -> [(user: String, password: String)] {
        captures(#"[a-z][a-z0-9+.-]*://([^/@\s:'"{]+):(\$\{[^}]*\}|[^@\s'"]+)@"#, in: text).map { ($0[0], $0[1]) }
    }

    /// The variable a compose `${NAME}`, `${NAME:?message}` or `${NAME:-default}` names; nil for anything else.
    static func reference(_ text: String) -> String? {
        captures(#"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[:?-][^}]*)?\}$"#, in: text).first?.first
    }

    /// What may stand where a password would: a reference (`${…}`, `$(…)`), a template's `@NAME@`, a placeholder.
    static func isPlaceholder(_ value: String) -> Bool {
        value.isEmpty || value.hasPrefix("$") || value == "CHANGE-ME" || value.hasPrefix("…")
            || value.range(of: "^@[A-Z_]+@$", options: .regularExpression) != nil
    }

    /// A RabbitMQ permission (configure, write and read regexes) reaches Herald's queues and exchange, and the
    /// default exchange for writes (named `amq.default` in permission checks: Herald publishes and dead-letters
    /// through it), and no other name. RabbitMQ searches a name for the regex, as `firstMatch` does.
    static func expectConfinedToHerald(
        _ permission: [String: Any], of user: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let topology = Topology(queueType: .quorum)
        let herald = topology.queues.map(\.name) + [topology.events]
        let foreign = [
            "amq.gen-JzTY20BRgKO-HjmUJj0wLg", "amq.rabbitmq.trace", "amq.topic", "other.jobs", "xherald.jobs",
            "tenant.herald.jobs", Topology.defaultPrefix,
        ]
        for (kind, alsoAllowed) in [("configure", [String]()), ("write", ["amq.default"]), ("read", [])] {
            let pattern = try #require(
                permission[kind] as? String, "\(user): no \(kind)", sourceLocation: sourceLocation)
            #expect(
                pattern.hasPrefix("^"), "\(user): \(kind) \(pattern) is not anchored", sourceLocation: sourceLocation)
            let regex = try NSRegularExpression(pattern: pattern)
            func matches(_ name: String) -> Bool {
                regex.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)) != nil
            }
            for name in herald + alsoAllowed {
                #expect(matches(name), "\(user) may not \(kind) \(name)", sourceLocation: sourceLocation)
            }
            for name in foreign + (alsoAllowed.isEmpty ? ["amq.default"] : []) {
                #expect(!matches(name), "\(user) may \(kind) \(name)", sourceLocation: sourceLocation)
            }
        }
    }

    /// The API's permission: each of configure, write and read reaches the jobs exchange and queue (one name) and
    /// nothing else.
    static func expectOnlyJobs(
        _ permission: [String: Any], of user: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let topology = Topology(queueType: .quorum)
        let others =
            topology.queues.map(\.name).filter { $0 != topology.jobs } + [
                topology.events, "amq.default", "amq.topic", "herald.jobsx", "herald.jobs.x", "xherald.jobs",
                "other.jobs",
            ]
        for kind in ["configure", "write", "read"] {
            let pattern = try #require(
                permission[kind] as? String, "\(user): no \(kind)", sourceLocation: sourceLocation)
            let regex = try NSRegularExpression(pattern: pattern)
            func matches(_ name: String) -> Bool {
                regex.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)) != nil
            }
            #expect(matches(topology.jobs), "\(user) may not \(kind) \(topology.jobs)", sourceLocation: sourceLocation)
            for name in others {
                #expect(!matches(name), "\(user) may \(kind) \(name)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A compose service's `ports`, short (`[IP:]HOST:CONTAINER[/proto]`) or long syntax.
    static func publishedPorts(_ service: [String: Any]) -> [(hostIP: String?, container: Int)] {
        (service["ports"] as? [Any] ?? []).map { entry in
            let fields = map(entry)
            if !fields.isEmpty {
                return (fields["host_ip"] as? String, fields["target"] as? Int ?? Int("\(fields["target"] ?? "")") ?? 0)
            }
            // A variable may hold a colon (`${PORT:-8443}`): it is one part whatever it holds.
            let text = "\(entry)".replacingOccurrences(
                of: #"\$\{[^}]*\}"#, with: "VARIABLE", options: .regularExpression)
            let parts = text.split(separator: ":").map(String.init)
            let container = Int(parts.last?.split(separator: "/").first ?? "") ?? 0
            return (parts.count == 3 ? parts[0] : nil, container)
        }
    }

    /// What a Caddyfile serves: its site addresses, the certificate and key files of `tls`, the `reverse_proxy`
    /// upstreams and the paths of `handle` blocks.
    static func caddySite(_ path: String) throws -> (
        addresses: [String], certificateFiles: [String], upstreams: [String], paths: [String]
    ) {
        var site: (addresses: [String], certificateFiles: [String], upstreams: [String], paths: [String]) = (
            [], [], [], []
        )
        for rawLine in try read(path).split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ").map(String.init)
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            if line.hasSuffix("{")
                && (first.hasPrefix("https://") || first.hasPrefix("http://") || first.hasPrefix(":"))
            {
                site.addresses.append(first)
            } else if first == "tls" {
                site.certificateFiles += words.dropFirst().filter { $0 != "{" }
            } else if first == "reverse_proxy", words.count > 1 {
                site.upstreams.append(words[1])
            } else if first == "handle", words.count > 1, words[1] != "{" {
                site.paths.append(words[1])
            }
        }
        return site
    }

    /// The capture groups of every match of `pattern` in `text`.
    static func captures(_ pattern: String, in text: String) -> [[String]] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (1..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    /// `NAME=value` lines of an env file (comments skipped).
    static func envFile(_ path: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in try read(path).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    /// A systemd unit's `Key=Value` lines, every value of a key in order (empty values kept: `CapabilityBoundingSet=`).
    static func unitValues(_ path: String) throws -> [String: [String]] {
        var values: [String: [String]] = [:]
        for line in try read(path).split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2 { values[String(parts[0]), default: []].append(String(parts[1])) }
        }
        return values
    }

    /// Whether git ignores `path` (relative to the repository), by the repository's own rules.
    static func gitIgnores(_ path: String) throws -> Bool {
        let (status, _) = try runGit(["check-ignore", "--quiet", "--no-index", path])
        #expect(status == 0 || status == 1, "git check-ignore \(path) failed")
        return status == 0
    }

    /// git's standard output in the repository; fails the test if git does.
    static func git(_ arguments: [String]) throws -> String {
        let (status, output) = try runGit(arguments)
        #expect(status == 0, "git \(arguments.joined(separator: " ")) exited \(status)")
        return output
    }

    static func runGit(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", root] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
