import APNSCore
import HeraldCore

/// The apps in use and their transports, each app's leased for the length of a run: `APNSClients` (a reload on
/// SIGHUP shuts replaced clients down only once their leases are released); a fake in the run's fast tests.
protocol TransportLeasing: Sendable {
    func leaseTransports(_ app: String) -> TransportLease?
    func release(_ lease: TransportLease)
}

/// An app's configuration and its transports, one per APNs environment it serves and FCM's, held until released.
struct TransportLease: Sendable {
    let app: AppConfiguration
    let byEnvironment: [AppConfiguration.Environment: any NotificationTransport<APNSRequest>]
    /// The transport of the app's default environment; nil for an app without APNs credentials.
    let standard: (any NotificationTransport<APNSRequest>)?
    /// FCM's transport, for the app's Android devices; nil for an app without FCM credentials.
    var fcm: (any NotificationTransport<[UInt8]>)? = nil
    /// The app's Web Push transports, one per push service origin; nil for an app without a `webpush` block.
    var webpush: WebPushTransports? = nil
    /// What the registry needs back to release it.
    let token: Int

    /// The transport for `environment`; the default environment's for one the app does not serve.
    func transport(for environment: AppConfiguration.Environment) -> (any NotificationTransport<APNSRequest>)? {
        byEnvironment[environment] ?? standard
    }
}
