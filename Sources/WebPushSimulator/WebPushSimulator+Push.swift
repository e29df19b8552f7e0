import Crypto

extension WebPushSimulator {
    /// A request's VAPID credentials after every check.
    struct VerifiedVAPID {
        var authorization: VAPIDAuthorization
        var tokenHash: String
        var key: [UInt8]
        var claims: VAPIDClaims
    }

    /// `POST <pathPrefix><id>`: the subscription's fate, VAPID, the RFC 8030 headers, the size, the injected
    /// failures, then decryption (see ``WebPushSimulator``).
    func answerPush(
        _ request: ReceivedRequest,
        id: String,
        now: Int64,
        record: inout WebPushSimulatorRequestRecord,
        accepted: inout WebPushSimulatorRecord?
    ) -> Answer {
        guard request.method == .POST else { return .methodNotAllowed }
        let keys: SimulatorState.Keys?
        switch state.withLock({ $0.fate(of: id, configuration: configuration) }) {
        case .gone: return .unsubscribed
        case .unknown: return .unknownSubscription
        case .anyKeys: keys = nil
        case .registered(let registered): keys = registered
        }

        let vapid: VerifiedVAPID
        switch verifyVAPID(request, now: now) {
        case .success(let verified): vapid = verified
        case .failure(let refusal):
            record.vapidRefusal = refusal.detail
            return refusal.answer
        }
        if let expected = keys?.applicationServerKey, expected != vapid.key {
            record.vapidRefusal = "k is not the applicationServerKey the subscription was made with"
            return .vapidPkHashMismatch
        }

        guard let ttlValue = request.headers.first(name: "ttl") else { return .missingTTL }
        guard let ttl = HeaderRules.ttl(ttlValue) else { return .badTTL }
        let urgency = request.headers.first(name: "urgency")
        if let urgency, !HeaderRules.urgencies.contains(urgency) { return .badUrgency }
        let topic = request.headers.first(name: "topic")
        if let topic, !HeaderRules.isValidTopic(topic) { return .badTopic }
        guard request.headers.first(name: "content-encoding")?.lowercased() == "aes128gcm" else {
            return .badContentEncoding
        }
        guard request.bodySize <= configuration.maximumBodySize else { return .payloadTooLarge }
        if let failure = injectedFailure(for: id) { return failure }

        var plaintext: [UInt8]?
        var decryptionFailure: String?
        do throws(PushDecryption.Failure) {
            if let keys {
                plaintext = try PushDecryption.decrypt(request.body, privateKey: keys.privateKey, auth: keys.auth)
            } else {
                _ = try PushDecryption.parse(request.body)
            }
        } catch {
            decryptionFailure = error.description
        }
        let messageID = state.withLock { $0.messageID() }
        accepted = WebPushSimulatorRecord(
            subscriptionID: id, plaintext: plaintext, decryptionFailure: decryptionFailure,
            bodySize: request.bodySize, ttl: ttl, urgency: urgency, topic: topic, vapidSubject: vapid.claims.subject,
            vapidAudience: vapid.claims.audience, vapidExpiry: vapid.claims.expiry, vapidTokenHash: vapid.tokenHash,
            vapidPublicKey: vapid.authorization.key, messageID: messageID, receivedAt: now,
            httpVersion: request.httpVersion)
        if let decryptionFailure {
            logger.warning(
                "Web Push simulator accepted a body that does not decrypt",
                metadata: ["subscription": "\(id)", "why": "\(decryptionFailure)"])
        }
        return .created(location: audience(of: request) + "/message/" + messageID, ttl: ttl)
    }

    /// Why VAPID failed, with the answer it gets.
    struct VAPIDFailure: Error {
        var detail: String
        var answer: Answer
    }

    /// The `Authorization` header's checks, in order; a token whose signature verified once is not verified again
    /// (its claims are still checked against this request).
    private func verifyVAPID(_ request: ReceivedRequest, now: Int64) -> Result<VerifiedVAPID, VAPIDFailure> {
        guard let authorization = VAPIDAuthorization(header: request.headers.first(name: "authorization")) else {
            return .failure(
                VAPIDFailure(detail: "no Authorization: vapid t=…, k=… header", answer: .missingAuthorization))
        }
        guard let key = Base64URL.decode(authorization.key), key.count == 65,
            let publicKey = try? P256.Signing.PublicKey(x963Representation: key)
        else {
            return .failure(VAPIDFailure(detail: "k is not a P-256 public key", answer: .badVapidPublicKey))
        }
        guard acceptedVAPIDKeys.isEmpty || acceptedVAPIDKeys.contains(key) else {
            return .failure(VAPIDFailure(detail: "k is not a key this service accepts", answer: .badJwtToken))
        }
        let tokenHash = authorization.tokenHash
        let cacheKey = authorization.key + "." + tokenHash
        do throws(VAPIDRefusal) {
            let claims: VAPIDClaims
            if let cached = state.withLock({ $0.verifiedClaims(cacheKey: cacheKey) }) {
                claims = cached
            } else {
                claims = try VAPIDVerifier.verifySignature(token: authorization.token, publicKey: publicKey)
                state.withLock { $0.rememberVerified(claims, cacheKey: cacheKey) }
            }
            try VAPIDVerifier.check(claims, audience: audience(of: request), now: now)
            state.withLock { $0.sawToken(hash: tokenHash, audience: claims.audience) }
            return .success(VerifiedVAPID(authorization: authorization, tokenHash: tokenHash, key: key, claims: claims))
        } catch {
            return .failure(VAPIDFailure(detail: error.detail, answer: .badJwtToken))
        }
    }

    /// The answer of an injected failure that fires for this request, with `Retry-After` if the rule sets one.
    private func injectedFailure(for id: String) -> Answer? {
        guard !configuration.injectedFailures.isEmpty,
            let failure = state.withLock({ $0.injectedFailure(for: id, rules: configuration.injectedFailures) })
        else { return nil }
        var answer = Answer.injected(status: failure.status)
        if let retryAfter = failure.retryAfter {
            answer.headers.append(("retry-after", String(retryAfter)))
            answer.retryAfter = retryAfter
        }
        return answer
    }
}
