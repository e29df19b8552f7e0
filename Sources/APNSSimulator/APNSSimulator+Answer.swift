import APNSCore
import Foundation
import Logging

extension APNSSimulator {
    /// Decides the answer to one complete request, counts it and records it if accepted; nil means never answer.
    ///
    /// Runs on the connection's event loop. The checks follow APNs: repeated headers, method, path, provider token,
    /// token update rule, the `apns-*` fields and payload, then the token's fate (bad, dead, injected failure).
    func answer(
        headers: [(name: String, value: String)],
        payload: [UInt8],
        payloadSize: Int,
        on connection: ConnectionState
    ) -> Answer? {
        if let path = headers.first(where: { $0.name == ":path" })?.value, let route = BroadcastValidation.route(path) {
            return answerBroadcastEndpoint(
                route, headers: headers, payload: payload, payloadSize: payloadSize, on: connection)
        }
        let now = configuration.now()
        let requestID = headers.first { $0.name == "apns-id" }?.value
        let apnsID =
            requestID.flatMap { APNSRequest.isCanonicalUUID($0) ? $0 : nil } ?? UUID().uuidString.lowercased()
        let uniqueID = UUID().uuidString.lowercased()

        let outcome: Result<APNSSimulatorRecord, Rejection>
        switch decide(
            headers: headers, payload: payload, payloadSize: payloadSize, now: now, apnsID: apnsID, on: connection)
        {
        case .none:
            finish(countKey: "silent", record: nil)
            return nil
        case .some(let result):
            outcome = result
        }
        switch outcome {
        case .success(let record):
            finish(countKey: "200", record: record)
            logger.trace("APNs simulator accepted a notification", metadata: ["apns-id": "\(apnsID)"])
            return Answer(status: 200, apnsID: apnsID, uniqueID: uniqueID, body: nil)
        case .failure(let rejection):
            finish(countKey: rejection.countKey, record: nil)
            logger.trace(
                "APNs simulator rejected a notification",
                metadata: ["status": "\(rejection.status)", "reason": "\(rejection.reason)"]
            )
            return Answer(status: rejection.status, apnsID: apnsID, uniqueID: uniqueID, body: rejection.body)
        }
    }

    /// Whether this request's stream is to be reset with REFUSED_STREAM (fault injection) instead of answered.
    func refusesStream(headers: [(name: String, value: String)]) -> Bool {
        let prefixes = configuration.refusedStreamTokenPrefixes
        guard !prefixes.isEmpty, let path = headers.first(where: { $0.name == ":path" })?.value,
            path.hasPrefix("/3/device/")
        else { return false }
        let token = path.dropFirst("/3/device/".count)
        guard prefixes.contains(where: { token.hasPrefix($0) }) else { return false }
        return state.withLock { $0.refuseStream(limit: configuration.refusedStreamLimit) }
    }

    /// Checks the provider token of a request; nil when it is accepted.
    func authenticate(_ authorization: String?, now: Int64, on connection: ConnectionState) -> Rejection? {
        let jwt: String
        switch RequestValidation.bearer(authorization) {
        case .success(let value): jwt = value
        case .failure(let rejection): return rejection
        }
        switch verdict(for: jwt, now: now) {
        case .rejected(let rejection):
            return rejection
        case .valid(let teamID, let issuedAt):
            if now - issuedAt > 3600 { return Rejection(403, .expiredProviderToken) }
            switch connection.useToken(jwt, teamID: teamID, now: now) {
            case .reject(let rejection):
                return rejection
            case .accept(let firstAuthentication):
                if firstAuthentication, configuration.maxConcurrentStreamsUntilAuthenticated != nil {
                    connection.advertise(maxConcurrentStreams: configuration.maxConcurrentStreams)
                }
            }
        }
        return nil
    }

    private func decide(
        headers: [(name: String, value: String)],
        payload: [UInt8],
        payloadSize: Int,
        now: Int64,
        apnsID: String,
        on connection: ConnectionState
    ) -> Result<APNSSimulatorRecord, Rejection>? {
        let target: RequestValidation.Target
        switch RequestValidation.target(headers) {
        case .success(let value): target = value
        case .failure(let rejection): return .failure(rejection)
        }
        let token = target.deviceToken
        if configuration.silentTokenPrefixes.contains(where: token.hasPrefix) { return nil }

        // With mTLS every connection carries a verified client certificate, which is the credential: a request
        // without an authorization header is accepted (APNs ignores the header with certificate auth).
        if configuration.clientCertificateTrustRootsPEM.isEmpty || target.authorization != nil {
            if let rejection = authenticate(target.authorization, now: now, on: connection) {
                return .failure(rejection)
            }
        }

        let fields: RequestValidation.Fields
        switch RequestValidation.fields(headers, payloadSize: payloadSize, allowedBundleIDs: configuration.topics) {
        case .success(let value): fields = value
        case .failure(let rejection): return .failure(rejection)
        }

        if fields.pushType == .liveactivity {
            // Live Activity pushes take priority 5 or 10 only (10 counts against the activity's budget); 1 is refused.
            guard fields.priority == 5 || fields.priority == 10 else { return .failure(Rejection(400, .badPriority)) }
            if let rejection = LiveActivityValidation.validate(payload) { return .failure(rejection) }
        }
        if configuration.badTokenPrefixes.contains(where: token.hasPrefix) {
            return .failure(Rejection(400, .badDeviceToken))
        }
        if configuration.deadTokens.contains(token) || configuration.deadTokenPrefixes.contains(where: token.hasPrefix)
        {
            return .failure(
                Rejection(410, .unregistered, timestamp: configuration.deadTimestamp ?? configuration.nowMilliseconds())
            )
        }
        if !configuration.injectedFailures.isEmpty,
            let failure = state.withLock({ $0.injectedFailure(for: token, rules: configuration.injectedFailures) })
        {
            return .failure(Rejection(status: failure.status, reason: failure.reason))
        }
        return .success(
            APNSSimulatorRecord(
                token: token,
                topic: fields.topic,
                pushType: fields.pushType.rawValue,
                priority: fields.priority,
                expiration: fields.expiration,
                collapseID: fields.collapseID,
                apnsID: apnsID,
                payload: String(decoding: payload, as: UTF8.self),
                receivedAt: configuration.nowMilliseconds()
            )
        )
    }

    /// Verifies a provider token once (ES256 is expensive) and remembers the verdict; a token issued in the future
    /// may become valid, so that verdict alone is not kept.
    private func verdict(for jwt: String, now: Int64) -> SimulatorState.TokenVerdict {
        if let cached = state.withLock({ $0.cachedVerdict(for: jwt) }) { return cached }
        let verdict: SimulatorState.TokenVerdict
        do {
            let claims = try verifier.get().verify(jwt, now: now)
            verdict = .valid(teamID: claims.teamID, issuedAt: claims.issuedAt)
        } catch {
            verdict = .rejected(RequestValidation.rejection(for: error))
            if error.code == .issuedInFuture { return verdict }
        }
        state.withLock { $0.cache(verdict, for: jwt) }
        return verdict
    }

    /// Counts an answer, records an accepted notification and wakes the waiters it satisfies.
    private func finish(countKey: String, record: APNSSimulatorRecord?) {
        let ready = state.withLock { $0.answered(countKey, record: record) }
        if let record { append(record) }
        for continuation in ready { continuation.resume() }
    }

    private func append(_ record: APNSSimulatorRecord) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let line = try? encoder.encode(record) else { return }
        recordFile.withLock { handle in
            guard let handle else { return }
            // A small synchronous write on the event loop: acceptable for a test tool, and it keeps lines in order.
            handle.write(line + Data("\n".utf8))
        }
    }
}
