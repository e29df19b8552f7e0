import FCMCore
import Synchronization
import Testing

@Suite struct FCMAccessTokenCacheTests {
    struct MintFailed: Error {}

    /// A token endpoint that counts its calls, checks each assertion, and can hold its answers at a gate.
    final class FakeEndpoint: Sendable {
        let clock: FakeClock
        let gate: Gate?
        let failures: Mutex<Int>
        let started: AsyncStream<Int>
        private let startedContinuation: AsyncStream<Int>.Continuation
        private let calls = Mutex(0)

        init(clock: FakeClock, gate: Gate? = nil, failFirst: Int = 0) {
            self.clock = clock
            self.gate = gate
            self.failures = Mutex(failFirst)
            (started, startedContinuation) = AsyncStream.makeStream()
        }

        func mint(_ account: FCMServiceAccount, _ assertion: String) async throws -> FCMAccessToken {
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            let verifier = try FCMAssertionVerifier(publicKeyPEM: account.publicKeyPEM, keyID: account.privateKeyID)
            _ = try verifier.verify(assertion, now: clock.now)
            startedContinuation.yield(call)
            await gate?.wait()
            try Task.checkCancellation()
            if failures.withLock({ remaining in
                defer { remaining = max(0, remaining - 1) }
                return remaining > 0
            }) {
                throw MintFailed()
            }
            let now = clock.now
            return FCMAccessToken(value: "ya29.token-\(call)", obtainedAt: now, expiresAt: now + 3600)
        }
    }

    static func cache(_ endpoint: FakeEndpoint) -> FCMAccessTokenCache {
        FCMAccessTokenCache(account: TestAccounts.account, now: { endpoint.clock.now }, mint: endpoint.mint)
    }

    @Test func aHundredConcurrentCallersShareOneMint() async throws {
        let gate = Gate()
        let endpoint = FakeEndpoint(clock: FakeClock(1_700_000_000), gate: gate)
        let cache = Self.cache(endpoint)
        let tokens = try await withThrowingTaskGroup(of: FCMAccessToken.self) { group in
            for _ in 0..<100 { group.addTask { try await cache.current() } }
            // The mint has started, and it stays at the gate until every other caller is queued behind it.
            var started = endpoint.started.makeAsyncIterator()
            _ = await started.next()
            while cache.waitingCount < 99 { await Task.yield() }
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(tokens.count == 100)
        #expect(Set(tokens).count == 1)
        #expect(tokens.first?.value == "ya29.token-1")
        #expect(cache.mintCount == 1)
    }

    @Test func theTokenIsReusedUntilItsRefreshMarginThenReplaced() async throws {
        let clock = FakeClock(1_700_000_000)
        let cache = Self.cache(FakeEndpoint(clock: clock))
        let first = try await cache.current()
        clock.advance(by: 3600 - 301)
        #expect(try await cache.current() == first)
        #expect(cache.mintCount == 1)
        clock.advance(by: 1)
        let second = try await cache.current()
        #expect(second != first)
        #expect(second.obtainedAt == 1_700_000_000 + 3300)
        #expect(cache.mintCount == 2)
    }

    @Test func aShortLivedTokenIsKeptForHalfItsLife() async throws {
        let clock = FakeClock(1000)
        let cache = FCMAccessTokenCache(
            account: TestAccounts.account, refreshMargin: 300, now: { clock.now },
            mint: { _, _ in FCMAccessToken(value: "short", obtainedAt: clock.now, expiresAt: clock.now + 120) })
        _ = try await cache.current()
        clock.advance(by: 59)
        _ = try await cache.current()
        #expect(cache.mintCount == 1)
        clock.advance(by: 1)
        _ = try await cache.current()
        #expect(cache.mintCount == 2)
    }

    @Test func invalidatingAStaleTokenDoesNothingAndTheCurrentOneRefreshesOnce() async throws {
        let clock = FakeClock(1_700_000_000)
        let cache = Self.cache(FakeEndpoint(clock: clock))
        let first = try await cache.current()
        clock.advance(by: 3400)
        let second = try await cache.current()
        #expect(cache.mintCount == 2)

        cache.invalidate(first)
        #expect(try await cache.current() == second)
        #expect(cache.mintCount == 2)

        // A hundred requests saw 401 on the current token: one new token.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { cache.invalidate(second) } }
        }
        let third = try await cache.current()
        #expect(third != second)
        for _ in 0..<100 { cache.invalidate(second) }
        #expect(try await cache.current() == third)
        #expect(cache.mintCount == 3)
    }

    @Test func aFailedMintFailsItsWaitersAndIsNotCached() async throws {
        let gate = Gate()
        let endpoint = FakeEndpoint(clock: FakeClock(1_700_000_000), gate: gate, failFirst: 1)
        let cache = Self.cache(endpoint)
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await cache.current()
                        return true
                    } catch {
                        return error is MintFailed
                    }
                }
            }
            var started = endpoint.started.makeAsyncIterator()
            _ = await started.next()
            while cache.waitingCount < 9 { await Task.yield() }
            gate.open()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 10 && results.allSatisfy { $0 })
        #expect(cache.mintCount == 1)
        #expect(try await cache.current().value == "ya29.token-2")
        #expect(cache.mintCount == 2)
    }

    @Test func aCancelledMinterHandsTheMintToAWaiterInsteadOfFailingIt() async throws {
        let gate = Gate()
        let endpoint = FakeEndpoint(clock: FakeClock(1_700_000_000), gate: gate)
        let cache = Self.cache(endpoint)
        var started = endpoint.started.makeAsyncIterator()
        let leader = Task { try await cache.current() }
        #expect(await started.next() == 1)
        let waiter = Task { try await cache.current() }
        while cache.waitingCount < 1 { await Task.yield() }
        leader.cancel()
        gate.open()
        await #expect(throws: CancellationError.self) { try await leader.value }
        #expect(try await waiter.value.value == "ya29.token-2")
        #expect(cache.mintCount == 2)
    }

    @Test func aSigningOrEndpointErrorReachesTheCaller() async throws {
        let clock = FakeClock(1000)
        let cache = FCMAccessTokenCache(
            account: TestAccounts.account, now: { clock.now },
            mint: { _, _ in throw FCMTokenError(.refused, status: 400, error: "invalid_grant", "refused the assertion")
            })
        await #expect { try await cache.current() } throws: { ($0 as? FCMTokenError)?.isCredentialFailure == true }
        await #expect(throws: FCMTokenError.self) { try await cache.current() }
        #expect(cache.mintCount == 2)
    }

    @Test func theSharedCacheIsOnePerAccount() {
        let clock = FakeClock(0)
        let mint: FCMAccessTokenCache.Mint = { _, _ in FCMAccessToken(value: "t", obtainedAt: 0, expiresAt: 3600) }
        let first = FCMAccessTokenCache.shared(for: TestAccounts.account, now: { clock.now }, mint: mint)
        let again = FCMAccessTokenCache.shared(for: TestAccounts.account, now: { clock.now }, mint: mint)
        let rotated = FCMServiceAccount(
            projectID: "herald-test", privateKeyID: "another-key", clientEmail: TestAccounts.account.clientEmail,
            privateKey: TestAccounts.otherKey)
        #expect(first === again)
        #expect(FCMAccessTokenCache.shared(for: rotated, now: { clock.now }, mint: mint) !== first)
    }
}
