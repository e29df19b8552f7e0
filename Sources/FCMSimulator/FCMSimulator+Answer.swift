import Logging

extension FCMSimulator {
    /// The largest body read, for both endpoints; a larger one is answered 413.
    static let bodyLimit = 64 * 1024

    /// Decides the answer to one complete request, records it (and the message, if accepted) and wakes waiters.
    ///
    /// Runs on the connection's event loop. The token path gets the OAuth endpoint, `/v1/projects/{p}/messages:send`
    /// the send endpoint, anything else 404.
    func answer(_ request: ReceivedRequest) -> Answer {
        let now = configuration.now()
        var record = FCMSimulatorRequestRecord(
            endpoint: .other, receivedAt: now, status: 0, httpVersion: request.httpVersion)
        var accepted: FCMSimulatorRecord?
        let answer: Answer
        if request.route == configuration.tokenPath {
            record.endpoint = .token
            answer = answerToken(request, now: now)
        } else if let project = Self.sendProject(request.route) {
            record.endpoint = .send
            answer = answerSend(request, project: project, now: now, record: &record, accepted: &accepted)
        } else {
            answer = .notFound
        }
        record.status = answer.status
        record.errorCode = answer.errorCode
        record.retryAfter = answer.retryAfter
        finish(record, accepted: accepted)
        logger.trace(
            "FCM simulator answered",
            metadata: [
                "endpoint": "\(record.endpoint.rawValue)", "status": "\(answer.status)",
                "error": "\(answer.errorCode ?? "-")",
            ])
        return answer
    }

    /// Records a request whose connection was dropped instead of answered (status 0).
    func dropped(_ request: ReceivedRequest) {
        let endpoint: FCMSimulatorRequestRecord.Endpoint =
            request.route == configuration.tokenPath ? .token : Self.sendProject(request.route) == nil ? .other : .send
        finish(
            FCMSimulatorRequestRecord(
                endpoint: endpoint, receivedAt: configuration.now(), status: 0, httpVersion: request.httpVersion),
            accepted: nil)
    }

    /// The project of `/v1/projects/{project}/messages:send`; nil for any other path.
    static func sendProject(_ path: Substring) -> String? {
        let prefix = "/v1/projects/"
        let suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.utf8.count > prefix.utf8.count + suffix.utf8.count
        else { return nil }
        let project = path.dropFirst(prefix.count).dropLast(suffix.count)
        // Project ids are 6–30 of [a-z0-9-]; numbers are digits. Anything else is not a path FCM serves.
        guard project.utf8.count <= 64,
            project.utf8.allSatisfy({ TargetValidation.isBase64URL($0) && $0 != UInt8(ascii: "_") })
        else { return nil }
        return String(project)
    }

    private func finish(_ request: FCMSimulatorRequestRecord, accepted: FCMSimulatorRecord?) {
        let ready = state.withLock { $0.answered(request, record: accepted) }
        if let accepted { append(accepted) }
        for continuation in ready { continuation.resume() }
    }
}
