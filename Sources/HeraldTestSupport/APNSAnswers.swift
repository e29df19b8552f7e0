import APNSCore
import HeraldCore

/// APNs' answers and reasons in the provider-neutral terms the settlement works in, for the tests that write them
/// as APNs sends them.
extension DeliveryResult {
    /// APNs' outcome, as `APNSClient`'s transport hands it on.
    public static func answered(apns outcome: APNSOutcome) -> DeliveryResult { .answered(ProviderAnswer(outcome)) }
}

extension ProviderReason {
    public static let unregistered = ProviderReason(APNSReason.unregistered)
    public static let badDeviceToken = ProviderReason(APNSReason.badDeviceToken)
    public static let deviceTokenNotForTopic = ProviderReason(APNSReason.deviceTokenNotForTopic)
    public static let badTopic = ProviderReason(APNSReason.badTopic)
}
