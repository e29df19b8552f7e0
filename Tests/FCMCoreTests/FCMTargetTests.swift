import FCMCore
import Testing

@Suite struct FCMTargetTests {
    static let realToken =
        "dGVzdC1kZXZpY2UtdG9rZW4:APA91bHPRgkF3JUikC4ENAHEeMrd41Zxv3hVZjC9KtT8OvPVGJ-hQMRKRrZuJAEcl7B338qju59zJMjw2DELjzEvxwYv7hH5Ynpc1ODQ0aT4U4OFEeco8ohsN5PjL1iC2dNtk2BAokeMCg2ZXKqpc8FXKmhX94kIxQ"

    @Test func aRealisticTokenAndFIDAreAccepted() throws {
        let token = try FCMTarget(token: Self.realToken)
        #expect(token.kind == .token)
        #expect(token.value == Self.realToken)
        let fid = try FCMTarget(fid: "cR_0123456789abcdefghi")
        #expect(fid.kind == .fid)
        #expect(try FCMTarget(kind: .fid, value: "f-ABCDEFGHIJKLMNOPQRST").value.count == 22)
    }

    @Test func theDescriptionShowsOnlyTheKindAndTheLastFourCharacters() throws {
        let token = try FCMTarget(token: Self.realToken)
        #expect("\(token)" == "token:…kIxQ")
        #expect(String(reflecting: token) == "FCMTarget(token:…kIxQ)")
        #expect(!"\(token)".contains(Self.realToken.prefix(20)))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: FCMTarget.Kind
        var value: String
        var reason: FCMRegistrationError.Reason

        init(_ kind: FCMTarget.Kind, _ value: String, _ reason: FCMRegistrationError.Reason) {
            self.kind = kind
            self.value = value
            self.reason = reason
        }

        var testDescription: String { "\(kind) \(reason)" }
    }

    static let invalid: [Case] = [
        Case(.token, "", .empty),
        Case(.token, "abc:def", .tooShort(length: 7)),
        Case(.token, String(repeating: "a", count: 4097), .tooLong(length: 4097)),
        Case(.token, "abcdefghij klmnopqrstuvwxyz", .badCharacter(position: 11, character: "U+0020")),
        Case(.token, "abcdefghij/klmnopqrstuvwxyz", .badCharacter(position: 11, character: "/")),
        Case(.token, "abcdefghijklmnopqrstuvwxyz\"", .badCharacter(position: 27, character: "U+0022")),
        Case(.token, "abcdéfghijklmnopqrstuvwxyz", .badCharacter(position: 5, character: "U+00E9")),
        Case(.fid, "", .empty),
        Case(.fid, "cR_0123456789abcdefgh", .wrongLength(length: 21)),
        Case(.fid, "cR_0123456789abcdefghij", .wrongLength(length: 23)),
        Case(.fid, Self.realToken, .wrongLength(length: Self.realToken.utf8.count)),
        Case(.fid, "cR:0123456789abcdefghi", .badCharacter(position: 3, character: ":")),
        Case(.fid, "aR_0123456789abcdefghi", .badFirstCharacter(character: "a")),
        Case(.fid, "gR_0123456789abcdefghi", .badFirstCharacter(character: "g")),
    ]

    @Test(arguments: invalid)
    func invalidIdentifiersAreNamedWithoutTheirValue(_ test: Case) {
        let (kind, value, reason) = (test.kind, test.value, test.reason)
        #expect {
            try FCMTarget(kind: kind, value: value)
        } throws: { error in
            let error = error as! FCMRegistrationError
            return error.kind == kind && error.reason == reason && (value.count < 8 || !"\(error)".contains(value))
        }
    }

    @Test func theLengthLimitsThemselvesAreAccepted() throws {
        #expect(try FCMTarget(token: String(repeating: "a", count: 20)).value.count == 20)
        #expect(try FCMTarget(token: String(repeating: "a", count: 4096)).value.count == 4096)
    }

    @Test func errorDescriptionsSayWhatIsWrong() {
        let cases: [(FCMRegistrationError, String)] = [
            (.init(kind: .token, reason: .empty), "FCM registration token is empty"),
            (
                .init(kind: .token, reason: .tooLong(length: 5000)),
                "FCM registration token is too long (5000 characters, at most 4096)"
            ),
            (.init(kind: .fid, reason: .wrongLength(length: 21)), "Firebase installation ID has 21 characters, not 22"),
            (
                .init(kind: .token, reason: .badCharacter(position: 11, character: "U+0020")),
                "FCM registration token has a character not allowed (U+0020) at position 11"
            ),
        ]
        for (error, text) in cases { #expect("\(error)" == text) }
    }
}
