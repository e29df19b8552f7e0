import APNSCore
import HeraldCore
import PushTransport

/// One provider's requests for a share of a batch: the devices' tokens, in order, and the i-th device's request,
/// made when it is sent. `RequestList` (APNs) and `FCMRequestList`.
protocol RequestSource: Sendable {
    associatedtype Request: Sendable
    var tokens: [DeviceToken] { get }
    subscript(index: Int) -> Request { get }
}

extension RequestSource {
    var count: Int { tokens.count }
}

/// A batch's APNs requests, each made when it is sent: a batch's worth of `APNSRequest`s at once was a large
/// allocation (and free) per batch, and glibc's consolidation of it showed in the profile. A class: shares of a
/// batch are copied as they are split, and a struct copy retained each of the template's fields.
final class RequestList: RequestSource {
    let template: NotificationTemplate
    /// The apns-topic, worked out once for the batch.
    let topic: String
    let tokens: [DeviceToken]
    /// Each device's payload when payloads vary (localizations, badges); nil when all get the template's.
    let payloads: [[UInt8]]?
    /// Each request's `apns-id`, the same for every send of the job to the device.
    let ids: NotificationID

    init(job: PreparedJob, bundleID: String, tokens: [DeviceToken], payloads: [[UInt8]]?) {
        self.template = job.template
        self.topic = template.pushType.topic(forBundleID: bundleID)
        self.tokens = tokens
        self.payloads = payloads
        self.ids = NotificationID(app: job.app, job: job.id)
    }

    subscript(index: Int) -> APNSRequest {
        var request = template.request(to: tokens[index], topic: topic, payload: payloads?[index])
        request.apnsID = ids.id(for: tokens[index])
        return request
    }
}

extension DeliveryResult {
    /// The transport's result as the pipeline sees it: an answer, or a failure described by its code.
    init(_ answer: Result<ProviderAnswer, TransportFailure>) {
        switch answer {
        case .success(let answer): self = .answered(answer)
        case .failure(let failure): self = .transportFailure(failure.code)
        }
    }

    var isSuccess: Bool {
        if case .answered(let outcome) = self { return outcome.isSuccess }
        return false
    }
}
