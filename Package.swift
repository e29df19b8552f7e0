// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "herald",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "herald", targets: ["HeraldCLI"]),
        .library(name: "APNSCore", targets: ["APNSCore"]),
        .library(name: "RabbitMQ", targets: ["RabbitMQ"]),
        .library(name: "HeraldProducer", targets: ["HeraldProducer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "5.0.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
    ],
    targets: [
        // MARK: C libraries, each wrapped once
        .systemLibrary(
            name: "CRabbitMQ",
            pkgConfig: "librabbitmq",
            providers: [.apt(["librabbitmq-dev"])]
        ),
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),

        // MARK: Engines
        .target(
            name: "RabbitMQ",
            dependencies: [
                "CRabbitMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "APNSCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        .target(
            name: "PushTransport",
            dependencies: [
                "APNSCore",
                "CNGHTTP2",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "APNSSimulator",
            dependencies: [
                "APNSCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: FCM HTTP v1: service accounts, access tokens, messages and answers; and its simulator
        .target(
            name: "FCMCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "FCMSimulator",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Web Push (RFC 8030, 8291, 8292): subscriptions, encryption, VAPID, payloads and answers
        .target(
            name: "WebPushCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto")
            ]
        ),
        // Herald's own Web Push service for tests, the demo and benchmarks: independent of WebPushCore on purpose
        // (it decrypts and verifies VAPID with its own code, so it checks the sender rather than agreeing with it).
        .target(
            name: "WebPushSimulator",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Domain and storage
        .target(
            name: "HeraldCore",
            dependencies: ["APNSCore", "FCMCore", "WebPushCore"]
        ),
        .target(
            name: "APNSChannels",
            dependencies: [
                "APNSCore",
                "HeraldCore",
                "PushTransport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore",
                "FCMCore",
                "WebPushCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Only to recognise the pool's circuit breaker (`ConnectionPoolError`), which PostgresNIO passes on
                // as it is: a failure the worker waits out as an outage (`StoreError.isUnreachable`).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),

        // MARK: Messaging and operations: what every process shares
        .target(
            name: "HeraldMessaging",
            dependencies: [
                "HeraldCore", "RabbitMQ",
            ]
        ),
        .target(
            name: "HeraldOperations",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // MARK: Processes
        .target(
            name: "HeraldWorker",
            dependencies: [
                "WebPushCore",
                "APNSChannels",
                "HeraldCore",
                "HeraldStore",
                "HeraldMessaging",
                "HeraldOperations",
                "APNSCore",
                "PushTransport",
                "RabbitMQ",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "HeraldProducer",
            dependencies: [
                "HeraldCore",
                "HeraldMessaging",
                "APNSCore",
                "RabbitMQ",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HeraldAPI",
            dependencies: [
                "APNSChannels",
                "HeraldCore",
                "HeraldStore",
                "HeraldMessaging",
                "HeraldOperations",
                "HeraldProducer",
                "RabbitMQ",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        .target(
            name: "HeraldDoctor",
            dependencies: [
                "WebPushCore",
                .product(name: "Crypto", package: "swift-crypto"),
                "APNSCore",
                "FCMCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "HeraldCore",
                "HeraldMessaging",
                "HeraldStore",
                "RabbitMQ",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),

        // MARK: The executable: commands, and the bench and demo beside the production modules
        .target(
            name: "HeraldCommandLine",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                "APNSCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HeraldBench",
            dependencies: [
                "WebPushCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                "HeraldCommandLine",
                "HeraldCore",
                "HeraldStore",
                "HeraldMessaging",
                "APNSCore",
                "PushTransport",
                "RabbitMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .target(
            name: "HeraldDemo",
            dependencies: [
                "WebPushCore", "WebPushSimulator",
                "FCMSimulator",
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                "HeraldCommandLine",
                "HeraldCore",
                "HeraldStore",
                "HeraldMessaging",
                "HeraldWorker",
                "APNSCore",
                "APNSSimulator",
                "RabbitMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "HeraldCLI",
            dependencies: [
                "WebPushCore",
                "APNSChannels",
                "FCMCore",
                "FCMSimulator",
                "WebPushSimulator",
                "HeraldCommandLine",
                "HeraldBench",
                "HeraldDemo",
                "HeraldDoctor",
                "HeraldAPI",
                "HeraldProducer",
                "HeraldCore",
                "HeraldStore",
                "HeraldMessaging",
                "HeraldWorker",
                "APNSCore",
                "APNSSimulator",
                "RabbitMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            plugins: ["BuildInfoPlugin"]
        ),
        // `herald --version`'s commit and Swift version, written before each build.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                "APNSCore",
                "APNSSimulator",
                "FCMSimulator",
                "HeraldCore",
                "HeraldStore",
                "RabbitMQ",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),

        // MARK: Tests: pure, loopback, integration, end to end
        .testTarget(name: "RabbitMQTests", dependencies: ["RabbitMQ", "HeraldTestSupport"]),
        .testTarget(name: "APNSCoreTests", dependencies: ["APNSCore", "HeraldTestSupport"]),
        .testTarget(name: "APNSTransportTests", dependencies: ["PushTransport", "APNSSimulator", "HeraldTestSupport"]),
        .testTarget(
            name: "APNSSimulatorTests",
            dependencies: [
                "APNSSimulator", "HeraldTestSupport",
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(name: "HeraldCoreTests", dependencies: ["HeraldCore", "HeraldTestSupport", "WebPushCore"]),
        .testTarget(name: "FCMCoreTests", dependencies: ["FCMCore"]),
        .testTarget(
            name: "WebPushCoreTests",
            dependencies: ["WebPushCore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "FCMSimulatorTests",
            dependencies: [
                "FCMSimulator", "HeraldTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "WebPushSimulatorTests",
            dependencies: [
                "WebPushSimulator", "HeraldTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "APNSChannelsTests",
            dependencies: [
                "APNSChannels", "APNSSimulator", "HeraldTestSupport", "HeraldStore", "HeraldCore", "HeraldAPI",
                "HeraldProducer", "RabbitMQ",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "HeraldStoreTests",
            dependencies: [
                "HeraldStore", "HeraldTestSupport", .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
            ]),
        .testTarget(name: "HeraldMessagingTests", dependencies: ["HeraldMessaging", "RabbitMQ", "HeraldTestSupport"]),
        .testTarget(
            name: "HeraldOperationsTests",
            dependencies: [
                "HeraldOperations",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(
            name: "HeraldWorkerTests",
            dependencies: [
                "HeraldWorker", "HeraldTestSupport", "FCMSimulator", "FCMCore",
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "HeraldCommandLineTests", dependencies: ["HeraldCommandLine"]),
        .testTarget(name: "HeraldBenchTests", dependencies: ["HeraldBench", "HeraldTestSupport"]),
        .testTarget(name: "HeraldDemoTests", dependencies: ["HeraldDemo", "FCMCore", "HeraldCore", "APNSCore"]),
        .testTarget(
            name: "HeraldCLITests",
            dependencies: [
                "HeraldCLI", "HeraldTestSupport", "HeraldCommandLine", "HeraldWorker", "HeraldAPI", "HeraldMessaging",
                "HeraldCore", "HeraldStore", "RabbitMQ",
            ]
        ),
        .testTarget(
            name: "HeraldDoctorTests",
            dependencies: [
                "HeraldDoctor", "HeraldMessaging", "HeraldStore", "HeraldCore", "RabbitMQ", "APNSSimulator",
                "FCMSimulator", "WebPushCore",
                "HeraldTestSupport", .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "HeraldAPITests",
            dependencies: [
                "HeraldAPI", "HeraldWorker", "HeraldMessaging", "HeraldTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "HeraldProducerTests",
            dependencies: ["HeraldProducer", "HeraldWorker", "HeraldMessaging", "APNSSimulator", "HeraldTestSupport"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "WebPushCore", "WebPushSimulator", "PushTransport",
                "HeraldWorker", "HeraldMessaging", "HeraldStore", "APNSSimulator", "FCMSimulator", "RabbitMQ",
                "HeraldTestSupport",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
    ]
)

// `HERALD_WARNINGS_AS_ERRORS=1` (what .ci/run sets) makes every compiler warning in Herald's own targets an error;
// the dependencies are built as usual.
if Context.environment["HERALD_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets where target.type != .plugin && target.type != .system {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-warnings-as-errors"])]
    }
}
