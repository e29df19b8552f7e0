import HeraldAPI
import HeraldCommandLine
import HeraldCore
import HeraldMessaging
import HeraldStore
import RabbitMQ

extension ApiCommand {
    /// Every key `herald api` reads.
    static let keys: [ConfigurationKey] =
        [.amqpURL, .databaseURL, .logLevel] + QueueOptions.keys + [.appsFile] + APIOptions.keys

    /// The keys without which the API cannot start.
    static let requiredKeys: Set<ConfigurationKey> = [.amqpURL, .databaseURL]

    /// The API's configuration from the resolved keys (and the apps file, if one is named).
    static func configuration(_ settings: ResolvedConfiguration) throws -> APIConfiguration {
        var configuration = APIConfiguration(
            amqp: try AMQPConfiguration(url: settings.requiredText(.amqpURL)),
            database: try DatabaseConfiguration(url: settings.requiredText(.databaseURL))
        )
        configuration.host = settings.requiredText(.apiHost)
        configuration.port = settings.integer(.apiPort)
        configuration.topology = Topology(settings)
        configuration.maximumBodySize = settings.integer(.apiMaximumBodySize)
        configuration.idleTimeout = settings.duration(.apiIdleTimeout)
        configuration.registerRequestsPerSecond = settings.integer(.apiRegisterRate)
        configuration.registerDevicesPerHour = settings.integer(.apiRegisterDevicesPerHour)
        configuration.activityTokensPerDevice = settings.integer(.apiActivityTokensPerDevice)
        if let (apps, directory) = try AppsFile.read(settings) {
            configuration.apps = apps
            configuration.appsDirectory = directory
            // Each app's identity secret, read once at start (never logged); an unreadable one stops the API.
            for app in apps.apps {
                configuration.identities[app.id] = AppIdentity(
                    secret: try app.identitySecret(directory: directory), required: app.identity?.isRequired ?? true)
            }
        }
        return configuration
    }
}
