import ArgumentParser
import Foundation
import HeraldCommandLine
import Testing

/// The flags every service command shares: a flag wins over its `HERALD_*` variable, and a missing value names both.
@Suite struct ServiceOptionsTests {
    @Test func aFlagWinsOverTheEnvironment() throws {
        let options = try ServiceOptions.parse(["--amqp-url", "amqp://flag", "--database-url", "postgres://flag"])
        #expect(try options.resolvedAMQPURL() == "amqp://flag")
        #expect(try options.resolvedDatabaseURL() == "postgres://flag")
    }

    @Test func aMissingValueNamesTheFlagAndTheVariable() throws {
        let variable = "HERALD_TEST_UNSET_\(UInt32.random(in: 0...UInt32.max))"
        #expect(Environment.get(variable) == nil)
        #expect(try Environment.value("given", variable, what: "--thing") == "given")
        do {
            _ = try Environment.value(nil, variable, what: "--thing")
            Issue.record("no error for a missing value")
        } catch let error as ValidationError {
            #expect(error.message == "--thing is required (or set \(variable))")
        }
    }

    @Test func anUnreadableFileIsNamed() {
        #expect(throws: ValidationError.self) { try read("/nonexistent/herald.pem") }
        #expect((try? publicKeyPEM(atPath: "/nonexistent/key.p8")) == nil)
    }
}
