import Logging
import ServiceLifecycle
import UnixSignals

/// Keeps SIGHUP from ending `herald api` (its default action terminates a process): the API has nothing to reread
/// (keys live in PostgreSQL and are read per request; the apps file is read at start-up, so a change to it needs a
/// restart), so the signal is logged and ignored. A process manager or terminal that sends SIGHUP no longer stops
/// the API for every tenant.
struct HangUpService: Service {
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        logger.debug("SIGHUP trapped")
        // Not `signals.cancelOnGracefulShutdown()` (swift-async-algorithms' `merge`): see `AppsReloadService`.
        await cancelWhenGracefulShutdown { [logger] in
            for await _ in signals {
                logger.notice(
                    "SIGHUP received and ignored",
                    metadata: [
                        "reason": .string(
                            "herald api reads its apps file at start-up only (restart it to apply a change); keys are "
                                + "read from PostgreSQL on each request")
                    ])
            }
        }
    }
}
