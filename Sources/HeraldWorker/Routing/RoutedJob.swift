import APNSCore
import HeraldCore
import RabbitMQ

/// A job message read, validated and routed (`Route.of`): what every later stage takes in hand. A class: it is
/// handed from queue to group to task, and a copy of a struct retained every field.
final class RoutedJob: Sendable {
    let delivery: AMQPDelivery
    let job: PreparedJob
    /// The job as published (JSON), for the jobs table.
    let spec: String
    /// When the producer published it (ms since 1970), if the message said.
    let publishedAt: Int64?
    /// How it goes through the worker, decided at intake.
    let route: Route

    init(delivery: AMQPDelivery, job: PreparedJob, spec: String, route: Route, publishedAt: Int64?) {
        self.delivery = delivery
        self.job = job
        self.spec = spec
        self.publishedAt = publishedAt
        self.route = route
    }

    /// The job's listed tokens.
    var tokens: [DeviceToken] {
        if case .tokens(let tokens) = job.audience { return tokens }
        return []
    }
}
