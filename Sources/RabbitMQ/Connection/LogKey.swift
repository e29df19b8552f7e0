/// Metadata keys for this module's log messages, so that messages stay constant and data is searchable.
enum LogKey {
    static let broker = "amqp.broker"
    static let vhost = "amqp.vhost"
    static let channel = "amqp.channel"
    static let error = "amqp.error"
    static let replyCode = "amqp.reply_code"
    static let heartbeat = "amqp.heartbeat"
    static let reason = "amqp.reason"
    static let queue = "amqp.queue"
    static let attempt = "amqp.reconnect_attempt"
    static let delay = "amqp.reconnect_delay"
}
