extension FCMSimulator {
    /// The longest `authorization` header read.
    static let maximumAuthorizationLength = 4096

    /// `POST /v1/projects/{project}/messages:send`: authentication, project, body, Message rules, then the target's
    /// fate and the injected failures.
    func answerSend(
        _ request: ReceivedRequest,
        project: String,
        now: Int64,
        record: inout FCMSimulatorRequestRecord,
        accepted: inout FCMSimulatorRecord?
    ) -> Answer {
        guard request.method == .POST else { return .methodNotAllowed }
        guard let (accessToken, grant) = authenticate(request.headers.first(name: "authorization"), now: now) else {
            return .google(.unauthenticated)
        }
        let account = try? verifier.get().accounts[grant.clientEmail]
        guard let account, account.projectID == project || account.projectNumber == project else {
            return .google(.permissionDenied(project: project))
        }
        guard request.bodySize <= Self.bodyLimit else {
            return .google(
                GoogleError(
                    code: 413, message: "Request payload size exceeds the limit: \(Self.bodyLimit) bytes.",
                    status: "INVALID_ARGUMENT"))
        }
        var seen = MessageValidation.Seen()
        let send: ValidatedSend
        do {
            send = try MessageValidation.validate(request.body, seen: &seen)
        } catch {
            record.target = seen.target
            record.validateOnly = seen.validateOnly
            return .google(error)
        }
        record.target = send.target
        record.validateOnly = send.validateOnly

        if let failure = fate(of: send) { return failure }
        let messageID = send.validateOnly ? "fake_message_id" : state.withLock { $0.messageID() }
        if !send.validateOnly {
            accepted = FCMSimulatorRecord(
                project: project, target: send.target, messageJSON: send.message.serialized, messageID: messageID,
                receivedAt: now, accessToken: accessToken, clientEmail: grant.clientEmail)
        }
        return .json(200, .object(["name": .string("projects/\(project)/messages/\(messageID)")]))
    }

    /// The access token of `Bearer <token>` and its live grant; nil when missing, unknown or expired.
    private func authenticate(_ authorization: String?, now: Int64) -> (String, SimulatorState.Grant)? {
        guard let authorization, authorization.utf8.count <= Self.maximumAuthorizationLength else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1])
        guard let grant = state.withLock({ $0.grant(for: token, now: now) }) else { return nil }
        return (token, grant)
    }

    /// The answer the target's fate or an injected failure gives instead of 200; nil for none.
    private func fate(of send: ValidatedSend) -> Answer? {
        if let device = send.target.deviceValue {
            if configuration.deadTokens.contains(device)
                || configuration.deadTokenPrefixes.contains(where: device.hasPrefix)
            {
                return .google(.unregistered)
            }
            if configuration.foreignTokenPrefixes.contains(where: device.hasPrefix) {
                return .google(.senderIDMismatch)
            }
            // APNs and web push credentials are only used by a real send: a dry run passes (FCM.md).
            if !send.validateOnly, configuration.thirdPartyAuthErrorPrefixes.contains(where: device.hasPrefix) {
                return .google(.thirdPartyAuthError)
            }
        }
        guard !configuration.injectedFailures.isEmpty,
            let failure = state.withLock({ $0.injectedFailure(for: send.target, rules: configuration.injectedFailures) }
            )
        else { return nil }
        var answer = Answer.google(.injected(status: failure.status))
        if let retryAfter = failure.retryAfter {
            answer.headers.append(("retry-after", String(retryAfter)))
            answer.retryAfter = retryAfter
        }
        return answer
    }
}
