import Testing

@testable import WebPushCore

@Suite("Web Push answers")
struct WebPushAnswerTests {
    static let now: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT

    static let statuses: [(Int, String?, WebPushAnswer.Kind)] = [
        (200, nil, .accepted), (201, nil, .accepted), (202, nil, .accepted),
        (404, nil, .gone), (410, nil, .gone),
        (413, nil, .payloadTooLarge),
        (429, nil, .rateLimited), (429, "120", .rateLimited),
        (406, "900", .rateLimited), (406, nil, .otherClientError),
        (500, nil, .unavailable), (502, nil, .unavailable), (503, "30", .unavailable), (504, nil, .unavailable),
        (400, nil, .badRequest),
        (401, nil, .credentials), (403, nil, .credentials),
        (405, nil, .otherClientError), (408, nil, .otherClientError), (451, nil, .otherClientError),
        (501, nil, .otherServerError), (507, nil, .otherServerError), (599, nil, .otherServerError),
    ]

    @Test("every status has its kind", arguments: statuses)
    func kinds(entry: (Int, String?, WebPushAnswer.Kind)) {
        let answer = WebPushAnswer(status: entry.0, retryAfter: entry.1, body: [], now: Self.now)
        #expect(answer.kind == entry.2, "\(entry.0) Retry-After \(entry.1 ?? "-")")
        #expect(answer.status == entry.0)
    }

    static let retryAfters: [(String, Int64?)] = [
        ("120", 120),
        (" 0 ", 0),
        ("86401", 86400),
        ("99999999999999999999999", 86400),
        ("Sun, 06 Nov 1994 08:51:37 GMT", 120),  // IMF-fixdate
        ("Sunday, 06-Nov-94 08:50:37 GMT", 60),  // RFC 850
        ("Sun Nov  6 08:49:47 1994", 10),  // asctime
        ("Sun, 06 Nov 1994 08:00:00 GMT", 0),  // in the past
        ("Mon, 07 Nov 1994 09:00:00 GMT", 86400),  // more than a day ahead
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("-5", nil),
        ("1.5", nil),
        ("soon", nil),
        ("Sun, 32 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 06 Foo 1994 08:49:37 GMT", nil),
        ("", nil),
    ]

    @Test("Retry-After is read in seconds or as an HTTP-date, bounded to a day", arguments: retryAfters)
    func retryAfter(entry: (String, Int64?)) {
        let answer = WebPushAnswer(status: 429, retryAfter: entry.0, body: [], now: Self.now)
        #expect(answer.retryAfter == entry.1, "\(entry.0)")
    }

    @Test("HTTP-dates convert to Unix time")
    func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.parse("Sat, 29 Feb 2020 12:00:00 GMT") == 1_582_977_600)
        #expect(HTTPDate.parse("Fri, 27 Nov 2026 16:46:44 GMT") == 1_795_798_004)
    }

    static let bodies: [(Int, String, String?)] = [
        (403, #"{"reason":"BadJwtToken"}"#, "BadJwtToken"),
        (400, #"{"reason":"BadWebPushTopic"}"#, "BadWebPushTopic"),
        (
            410, #"{"code":410,"errno":106,"error":"Gone","message":"Request did not validate No such subscription"}"#,
            "errno 106: Request did not validate No such subscription"
        ),
        (401, #"{"code":401,"errno":109,"error":"Unauthorized"}"#, "errno 109: Unauthorized"),
        (410, "push subscription has unsubscribed or expired.\n", "push subscription has unsubscribed or expired."),
        (
            404,
            "A valid push subscription endpoint should be specified in the URL as such: "
                + "https://fcm.googleapis.com/wp/dHIoDxE7Hdg:APA91bH1secretTOKEN",
            "A valid push subscription endpoint should be specified in the URL as such: https://fcm.googleapis.com/…"
        ),
        (500, "", nil),
        (500, "   ", nil),
        (502, "{not json", "{not json"),
    ]

    @Test("the reason comes from Apple's, Mozilla's or plain bodies, without an endpoint", arguments: bodies)
    func reasons(entry: (Int, String, String?)) {
        let answer = WebPushAnswer(status: entry.0, retryAfter: nil, body: Array(entry.1.utf8), now: Self.now)
        #expect(answer.reason == entry.2)
        #expect(answer.reason?.contains("secretTOKEN") != true)
    }

    @Test("a long reason is cut to 200 characters; an accepted answer has none")
    func bounded() {
        let long = WebPushAnswer(
            status: 400, retryAfter: nil, body: Array(String(repeating: "é", count: 1000).utf8), now: Self.now)
        #expect(long.reason?.count == 200)
        let mozilla = WebPushAnswer(
            status: 400, retryAfter: nil,
            body: Array(#"{"errno":111,"message":"\#(String(repeating: "m", count: 500))"}"#.utf8), now: Self.now)
        #expect(mozilla.reason?.count == 200)
        #expect(mozilla.reason?.hasPrefix("errno 111: mmm") == true)
        #expect(WebPushAnswer(status: 201, retryAfter: nil, body: Array("ok".utf8), now: Self.now).reason == nil)
    }
}
