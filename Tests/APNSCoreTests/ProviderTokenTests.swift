import APNSCore
import Crypto
import Synchronization
import Testing

@Suite struct ProviderTokenTests {
    static let key = P256.Signing.PrivateKey()
    static let signer = ProviderTokenSigner(teamID: "TEAM123456", keyID: "KEY1234567", privateKey: key)

    static func verifier() throws -> ProviderTokenVerifier {
        try ProviderTokenVerifier(keys: ["KEY1234567": (teamID: "TEAM123456", publicKeyPEM: signer.publicKeyPEM)])
    }

    @Test func aSignedTokenVerifies() throws {
        let token = try Self.signer.makeToken(issuedAt: 1_000_000)
        let claims = try Self.verifier().verify(token, now: 1_000_010)
        #expect(claims == .init(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: 1_000_000))
    }

    @Test func anHourOldTokenIsExpired() throws {
        let token = try Self.signer.makeToken(issuedAt: 1_000_000)
        #expect { try Self.verifier().verify(token, now: 1_000_000 + 3601) } throws: {
            ($0 as? ProviderTokenError)?.code == .expired
        }
    }

    @Test func aTokenFromAnotherKeyFailsItsSignature() throws {
        let other = ProviderTokenSigner(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKey: P256.Signing.PrivateKey())
        let token = try other.makeToken(issuedAt: 1_000_000)
        #expect { try Self.verifier().verify(token, now: 1_000_000) } throws: {
            ($0 as? ProviderTokenError)?.code == .badSignature
        }
    }

    @Test func unknownKeyAndWrongTeamAreNamed() throws {
        let unknown = ProviderTokenSigner(teamID: "TEAM123456", keyID: "OTHERKEY12", privateKey: Self.key)
        #expect { try Self.verifier().verify(try unknown.makeToken(issuedAt: 5), now: 5) } throws: {
            ($0 as? ProviderTokenError)?.code == .unknownKey
        }
        let wrongTeam = ProviderTokenSigner(teamID: "OTHERTEAM1", keyID: "KEY1234567", privateKey: Self.key)
        #expect { try Self.verifier().verify(try wrongTeam.makeToken(issuedAt: 5), now: 5) } throws: {
            ($0 as? ProviderTokenError)?.code == .wrongTeam
        }
    }

    @Test func aP8FileLoadsAndABadOneIsNamedWithoutItsContents() throws {
        let pem = Self.key.pemRepresentation
        _ = try ProviderTokenSigner(teamID: "T", keyID: "K", pemKey: pem)
        #expect {
            _ = try ProviderTokenSigner(teamID: "T", keyID: "K", pemKey: "-----BEGIN PRIVATE KEY-----\nnope\n")
        } throws: {
            ($0 as? ProviderTokenError)?.code == .invalidKey && !"\($0)".contains("nope")
        }
    }

    @Test func theCacheReusesATokenUntilItIsDueAndRefreshesOnceOnExpiry() throws {
        let clock = Mutex<Int64>(10_000)
        let cache = ProviderTokenCache(signer: Self.signer) { clock.withLock { $0 } }
        let first = try cache.current()
        clock.withLock { $0 += 49 * 60 }
        #expect(try cache.current() == first)
        clock.withLock { $0 += 60 }
        let second = try cache.current()
        #expect(second != first)
        #expect(second.issuedAt == 10_000 + 50 * 60)

        // ExpiredProviderToken within 20 minutes of the last token: no new token (would be TooManyProviderTokenUpdates).
        clock.withLock { $0 += 5 * 60 }
        #expect(try cache.refresh(after: second) == second)
        // After 20 minutes, many requests report the same rejected token: exactly one new token.
        clock.withLock { $0 += 16 * 60 }
        let third = try cache.refresh(after: second)
        #expect(third != second)
        #expect(try cache.refresh(after: second) == third)
    }

    /// One cache per key per process: signers of the same key (read again by each client, or on a reload) share
    /// it, and so its token; another key, or the same key id with another key (a rotation), has its own.
    @Test func theSharedCacheIsOnePerKey() throws {
        let key = P256.Signing.PrivateKey()
        let first = ProviderTokenSigner(teamID: "TEAM123456", keyID: "KEYSHARED1", privateKey: key)
        let again = ProviderTokenSigner(teamID: "TEAM123456", keyID: "KEYSHARED1", privateKey: key)
        let rotated = ProviderTokenSigner(
            teamID: "TEAM123456", keyID: "KEYSHARED1", privateKey: P256.Signing.PrivateKey())
        #expect(ProviderTokenCache.shared(for: first) === ProviderTokenCache.shared(for: again))
        #expect(try ProviderTokenCache.shared(for: first).current() == ProviderTokenCache.shared(for: again).current())
        #expect(ProviderTokenCache.shared(for: first) !== ProviderTokenCache.shared(for: rotated))
    }

    @Test func signerDescriptionHidesTheKey() {
        #expect("\(Self.signer)" == "ProviderTokenSigner(team: TEAM123456, key: KEY1234567)")
    }
}
