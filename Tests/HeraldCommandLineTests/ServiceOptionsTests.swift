import ArgumentParser
import Foundation
import HeraldCommandLine
import Testing

/// The flags every service command shares resolve through the registry: a flag wins over its `HERALD_*` variable,
/// and a missing value names the flag, the variable and the file's key.
@Suite struct ServiceOptionsTests {
    @Test func aFlagWinsOverTheEnvironment() throws {
        let options = try ServiceOptions.parse(["--amqp-url", "amqp://flag", "--database-url", "postgres://flag"])
        let resolved = try options.resolver(environment: [
            "HERALD_AMQP_URL": "amqp://env", "HERALD_DATABASE_URL": "postgres://env",
        ]).resolve([.amqpURL, .databaseURL])
        #expect(resolved.text(.amqpURL) == "amqp://flag")
        #expect(resolved.text(.databaseURL) == "postgres://flag")
        #expect(resolved.source(of: .amqpURL) == .flag("--amqp-url"))
    }

    @Test func aMissingRequiredValueNamesTheFlagTheVariableAndTheKey() throws {
        let options = try ServiceOptions.parse([])
        #expect(
            throws: ConfigurationProblems([
                "amqp.url is not set: give --amqp-url, set HERALD_AMQP_URL, or set amqp.url in the configuration file"
            ])
        ) {
            try options.resolver(environment: [:]).resolve([.amqpURL], required: [.amqpURL])
        }
    }

    @Test func theConfigFlagWinsOverTheConfigFileVariable() throws {
        let options = try ServiceOptions.parse(["--config", "/nonexistent/flag.json"])
        #expect(
            throws: ConfigurationProblems([
                "cannot read the configuration file /nonexistent/flag.json (from --config): there is no such file"
            ])
        ) {
            try options.resolver(environment: ["HERALD_CONFIG_FILE": "/nonexistent/env.json"]).resolve([.logLevel])
        }
        #expect(
            throws: ConfigurationProblems([
                "cannot read the configuration file /nonexistent/env.json (from HERALD_CONFIG_FILE): there is no such file"
            ])
        ) {
            try ServiceOptions.parse([]).resolver(environment: ["HERALD_CONFIG_FILE": "/nonexistent/env.json"])
                .resolve([.logLevel])
        }
    }

    /// Each option group declares exactly its keys' flags (the names `herald --help` and the deploy files use).
    @Test(arguments: [
        (ServiceOptions.self as any ConfigurationOptions.Type, [ConfigurationKey.amqpURL, .databaseURL, .logLevel]),
        (QueueOptions.self, QueueOptions.keys),
        (QueuePrefixOptions.self, [.queuePrefix]),
        (AppsFileOptions.self, [.appsFile]),
        (MigrationOptions.self, [.schemasDirectory]),
        (RetentionOptions.self, RetentionOptions.keys),
        (WebhookOptions.self, WebhookOptions.keys),
    ])
    func everyKeyOfAGroupIsSetByItsFlag(_ group: any ConfigurationOptions.Type, _ keys: [ConfigurationKey]) throws {
        for key in keys {
            let parsed = try group.parse([key.option, "x"])
            let given = parsed.givenFlags.filter { $0.text != nil }
            #expect(given.map(\.key) == [key])
            #expect(given.first?.text == "x")
        }
        #expect(Set(try group.parse([]).givenFlags.map(\.key)) == Set(keys))
    }

    @Test func anUnreadableFileIsNamed() {
        #expect(throws: ValidationError.self) { try read("/nonexistent/herald.pem") }
        #expect((try? publicKeyPEM(atPath: "/nonexistent/key.p8")) == nil)
    }
}
