import Logging

extension WebPushSimulator {
    /// Decides the answer to one complete request, records it (and the message, if accepted) and wakes waiters.
    ///
    /// Runs on the connection's event loop. `<pathPrefix><id>` gets the push checks, anything else 404.
    func answer(_ request: ReceivedRequest) -> Answer {
        let now = configuration.now()
        var record = WebPushSimulatorRequestRecord(
            subscriptionID: nil, status: 0, receivedAt: now, httpVersion: request.httpVersion)
        var accepted: WebPushSimulatorRecord?
        let answer: Answer
        if let id = subscriptionID(request.route) {
            record.subscriptionID = id
            answer = answerPush(request, id: id, now: now, record: &record, accepted: &accepted)
        } else {
            answer = .refusal(404, "NotFound", errno: 102)
        }
        record.status = answer.status
        record.reason = answer.reason
        record.retryAfter = answer.retryAfter
        finish(record, accepted: accepted)
        logger.trace(
            "Web Push simulator answered",
            metadata: ["status": "\(answer.status)", "reason": "\(answer.reason ?? "-")"])
        return answer
    }

    /// Records a request whose connection was dropped instead of answered (status 0).
    func dropped(_ request: ReceivedRequest) {
        finish(
            WebPushSimulatorRequestRecord(
                subscriptionID: subscriptionID(request.route), status: 0, receivedAt: configuration.now(),
                httpVersion: request.httpVersion),
            accepted: nil)
    }

    /// The id of `<pathPrefix><id>`: one non-empty path segment of at most 512 characters; nil for any other path.
    func subscriptionID(_ route: Substring) -> String? {
        guard route.hasPrefix(configuration.pathPrefix) else { return nil }
        let id = route.dropFirst(configuration.pathPrefix.count)
        guard !id.isEmpty, id.utf8.count <= 512, !id.contains("/") else { return nil }
        return String(id)
    }

    /// The `aud` a token must carry: `https://` + the request's authority (`:authority`, or `Host` over
    /// HTTP/1.1), without `:443`; the simulator's ``origin`` when the request named none.
    func audience(of request: ReceivedRequest) -> String {
        guard let authority = request.headers.first(name: "host"), !authority.isEmpty else { return origin }
        return "https://" + (authority.hasSuffix(":443") ? String(authority.dropLast(4)) : authority)
    }

    private func finish(_ request: WebPushSimulatorRequestRecord, accepted: WebPushSimulatorRecord?) {
        let ready = state.withLock { $0.answered(request, record: accepted) }
        if let accepted { append(accepted) }
        for continuation in ready { continuation.resume() }
    }
}
