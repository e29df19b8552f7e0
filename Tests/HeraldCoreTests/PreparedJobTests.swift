import APNSCore
import HeraldCore
import Testing

@Suite struct PreparedJobTests {
    static func decode(_ json: String) throws(JobError) -> PreparedJob {
        try PreparedJob.decode(Array(json.utf8)) { "generated-id" }
    }

    @Test func decodesTheContractShape() throws {
        let job = try Self.decode(
            #"""
            {"id": "j1", "app": "com.example.news", "target": {"tokens": ["<AD853C20 3A9B0000>", "ad853c203a9b0000"]},
             "notification": {"push_type": "alert", "priority": 10, "expiration": 0, "collapse_id": "c",
                              "aps": {"alert": "hi"}, "custom": {"k": 1}}}
            """#
        )
        #expect(job.id == "j1")
        #expect(job.audience == .tokens([DeviceToken(trustedHex: "ad853c203a9b0000")]))
        #expect(job.template.priority == .immediate)
        #expect(String(decoding: job.template.payload, as: UTF8.self) == #"{"aps":{"alert":"hi"},"k":1}"#)
    }

    @Test func assignsAnIdWhenMissing() throws {
        let job = try Self.decode(#"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"}}}"#)
        #expect(job.id == "generated-id")
        #expect(job.audience == .all(locales: nil))
    }

    @Test func badTokensFailAloneAndTheRestGoOn() throws {
        let job = try Self.decode(
            #"{"app":"a","target":{"tokens":["zz","abc","aabb"]},"notification":{"aps":{"alert":"hi"}}}"#)
        #expect(job.invalidTokenCount == 2)
        #expect(job.audience == .tokens([DeviceToken(trustedHex: "aabb")]))
    }

    @Test(arguments: [
        ("not json", "not a job"),
        (#"{"app":"a","notification":{"aps":{"alert":"hi"}}}"#, "missing field target"),
        (#"{"app":"a","target":{"all":true,"topic":"x"},"notification":{"aps":{"alert":"hi"}}}"#, "exactly one"),
        (#"{"app":"a","target":{"all":false},"notification":{"aps":{"alert":"hi"}}}"#, "must be true"),
        (#"{"app":"a","target":{"tokens":[]},"notification":{"aps":{"alert":"hi"}}}"#, "target.tokens is empty"),
        (#"{"app":"","target":{"all":true},"notification":{"aps":{"alert":"hi"}}}"#, "app is empty"),
        (#"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"priority":7}}"#, "apns-priority 7"),
        (
            #"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"push_type":"nope"}}"#,
            "not an APNs push type"
        ),
        (
            #"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"push_type":"background","priority":10}}"#,
            "priority 5"
        ),
        (
            #"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"push_type":"background","priority":5}}"#,
            "content-available"
        ),
        (
            #"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"custom":{"aps":1}}}"#,
            "must not contain the key aps"
        ),
    ])
    func rejectsWithAReasonNamingTheRule(json: String, expected: String) {
        #expect {
            _ = try Self.decode(json)
        } throws: { error in
            (error as? JobError)?.description.contains(expected) == true
        }
    }

    @Test func aNULCharacterIsRejectedButAnEscapedBackslashBeforeU0000IsText() throws {
        // PostgreSQL can store neither: such a job would fail to be recorded on every redelivery.
        #expect {
            _ = try Self.decode(
                #"{"id":"a\u0000b","app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"}}}"#)
        } throws: { error in
            (error as? JobError)?.description.contains("U+0000") == true
        }
        #expect(throws: JobError.self) {
            _ = try Self.decode(#"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"x\\\u0000"}}}"#)
        }
        // `\\u0000` is a backslash and the text u0000.
        let job = try Self.decode(#"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"C:\\u0000"}}}"#)
        #expect(String(decoding: job.template.payload, as: UTF8.self).contains(#"C:\\u0000"#))
    }

    @Test func payloadOverTheLimitIsRejectedBeforeSending() {
        let big = String(repeating: "x", count: 4100)
        #expect(throws: JobError.self) {
            _ = try Self.decode(#"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"\#(big)"}}}"#)
        }
        // voip allows 5120 bytes
        _ = try? Self.decode(
            #"{"app":"a","target":{"all":true},"notification":{"push_type":"voip","aps":{"alert":"\#(big)"}}}"#
        )
    }

    @Test func voipAllowsLargerPayloads() throws {
        let big = String(repeating: "x", count: 4100)
        let job = try Self.decode(
            #"{"app":"a","target":{"all":true},"notification":{"push_type":"voip","aps":{"alert":"\#(big)"}}}"#
        )
        #expect(job.template.request(to: DeviceToken(trustedHex: "aa"), bundleID: "com.x").topic == "com.x.voip")
    }

    @Test func collapseIDOver64BytesIsRejected() {
        let long = String(repeating: "c", count: 65)
        #expect(throws: JobError.self) {
            _ = try Self.decode(
                #"{"app":"a","target":{"all":true},"notification":{"aps":{"alert":"hi"},"collapse_id":"\#(long)"}}"#)
        }
    }
}
