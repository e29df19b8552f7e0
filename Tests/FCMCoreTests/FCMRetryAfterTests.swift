import FCMCore
import Testing

@Suite struct FCMRetryAfterTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT.
    static let now: Int64 = 784_111_777

    @Test(
        arguments: [
            ("120", 120), ("0", 0), ("86400", 86_400), (" 30 ", 30),
            ("Sun, 06 Nov 1994 08:51:37 GMT", 120),
            ("Sunday, 06-Nov-94 08:51:37 GMT", 120),
            ("Sun Nov  6 08:51:37 1994", 120),
            ("Mon, 07 Nov 1994 08:49:37 GMT", 86_400),
            ("Sun, 06 Nov 1994 08:49:36 GMT", 0),
            ("Sat, 01 Jan 1994 00:00:00 GMT", 0),
        ] as [(String, Int64)])
    func validValuesGiveSeconds(value: String, seconds: Int64) {
        #expect(FCMRetryAfter.seconds(value, now: Self.now) == seconds)
    }

    @Test(arguments: [
        "", " ", "86401", "-1", "+5", "1.5", "1e3", "soon", "99999999999999999999",
        "Mon, 07 Nov 1994 08:49:38 GMT",
        "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, +6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49 1994",
        String(repeating: "1", count: 100),
    ])
    func garbageAndOutOfRangeGiveNil(value: String) {
        #expect(FCMRetryAfter.seconds(value, now: Self.now) == nil)
    }

    @Test func aTwoDigitYearIsResolvedAgainstNow() {
        // now is in 2026: "26" is 2026, so the date is a minute ahead.
        let now: Int64 = 1_795_000_000  // Wed, 18 Nov 2026 11:06:40 GMT
        #expect(FCMRetryAfter.seconds("Wednesday, 18-Nov-26 11:07:40 GMT", now: now) == 60)
        #expect(FCMRetryAfter.seconds("Wed, 18 Nov 2026 11:07:40 GMT", now: now) == 60)
    }
}
