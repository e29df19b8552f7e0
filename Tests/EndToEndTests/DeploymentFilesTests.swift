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
        #expect(Set(services.keys) == ["rabbitmq", "postgres", "migrate", "api", "worker", "apns-sim"])

        // The broker: management image, Herald's definitions file loaded at boot.
        let rabbitmq = Self.map(services["rabbitmq"])
        #expect((rabbitmq["image"] as? String)?.hasSuffix("-management") == true)
        let mounts = Self.strings(rabbitmq["volumes"])
        #expect(mounts.contains { $0.hasPrefix("./rabbitmq/definitions.json:/etc/rabbitmq/definitions.d/") })
        let rabbitConf = try Self.read("deploy/compose/rabbitmq.conf")
        #expect(rabbitConf.contains("load_definitions = /etc/rabbitmq/definitions.d"))
        for mount in mounts where mount.hasPrefix("./") {
            let source = String(mount.dropFirst(2).prefix { $0 != ":" })
            #expect(FileManager.default.fileExists(atPath: Self.root + "/deploy/" + source), "missing \(source)")
        }
        let users = try JSONSerialization.jsonObject(
            with: Data(try Self.read("deploy/compose/rabbitmq-users.json").utf8))
        let userNames = (Self.map(users)["users"] as? [Any] ?? []).compactMap { Self.map($0)["name"] as? String }
        #expect(userNames == ["herald"])

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
        let environment = try Self.read("deploy/systemd/herald.env.example").split(separator: "\n")
            .filter { !$0.hasPrefix("#") && $0.contains("=") }.map { String($0.prefix { $0 != "=" }) }
        try Self.expectKnownEnvironment(environment, in: "herald.env.example")
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
        let pattern = try NSRegularExpression(pattern: #"\b(herald|apns)_[a-z_]+"#)
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
}
