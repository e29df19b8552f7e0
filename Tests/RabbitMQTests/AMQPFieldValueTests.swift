import Testing

@testable import RabbitMQ

@Suite struct AMQPFieldValueTests {
    @Test func tablesSurviveTheRoundTripThroughRabbitMQC() {
        let table: AMQPTable = [
            "string": "héllo",
            "int": -42,
            "big": .int(Int64.max),
            "bool": true,
            "double": 2.5,
            "nested": ["inner": "value", "list": [1, "two", false]],
            "empty": [:],
        ]
        let pool = ScratchPool()
        let decoded = AMQPTable(table.encoded(in: pool))
        #expect(decoded == table)
    }

    @Test func literalsBuildTheExpectedCases() {
        let value: AMQPFieldValue = ["a": [1, 2.0, "x", true]]
        #expect(value == .table(["a": .array([.int(1), .double(2.0), .string("x"), .bool(true)])]))
    }

    @Test func propertiesSurviveTheRoundTripThroughRabbitMQC() {
        let properties = AMQPProperties(
            contentType: "application/json", contentEncoding: "gzip", messageID: "m-1", correlationID: "c-1",
            persistent: false, headers: ["x-attempt": 3], expiration: "60000", timestamp: 1_700_000_000, priority: 4,
            type: "job", appID: "herald", replyTo: "replies")
        let pool = ScratchPool()
        #expect(AMQPProperties(properties.encoded(in: pool)) == properties)
        #expect(AMQPProperties(AMQPProperties().encoded(in: pool)) == AMQPProperties())
    }
}
