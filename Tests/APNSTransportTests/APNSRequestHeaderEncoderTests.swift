import Testing

@testable import APNSTransport

/// The header encoder's number formatting: `apns-expiration`, `apns-priority` and `content-length` values.
@Suite struct APNSRequestHeaderEncoderTests {
    @Test(arguments: [0, 5, 9, 10, 99, 100, 1_732_617_600, 999_999_999_999, -1, -10, Int64.max, Int64.min])
    func decimalsAreWrittenAsSwiftPrintsThem(_ value: Int64) {
        var bytes = Array("x:".utf8)
        APNSRequestHeaderEncoder.appendDecimal(value, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "x:\(value)")
    }
}
