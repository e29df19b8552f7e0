import HeraldCore
import HeraldStore

/// One unit of a delivery run: a planned batch, or the one batch of a small job. What the run knows of it before it
/// is sent, decided here for both kinds: its first counts, whether it expired, why it is not sent when its app is
/// gone.
///
/// It does not hold its job (a large value, copied with it): the run keeps the job beside it.
struct DeliveryUnit: Sendable {
    let batch: BatchMessage
    /// When the producer published the job (ms since 1970).
    let publishedAt: Int64
    /// Its write-back, its first counts in it.
    var writeBack: WriteBack

    /// A unit of `devices` devices: targeted on their batch's first attempt (a retry batch's devices were targeted by
    /// the attempt before it), and on the job's first batch of listed tokens the entries that were not tokens, each
    /// failed alone and counted once.
    init(job: PreparedJob, batch: BatchMessage, publishedAt: Int64, devices: Int) {
        self.batch = batch
        self.publishedAt = publishedAt
        writeBack = WriteBack(jobID: job.id, app: job.app)
        writeBack.targeted = batch.attempt == 1 ? devices : 0
        if batch.seq == 0 && batch.attempt == 1 && batch.tokens != nil {
            writeBack.rejectedTokens = job.invalidTokenCount
            writeBack.targeted += job.invalidTokenCount
        }
    }

    /// Leaves out the job's entries that were not tokens: a part of the batch other than its first (a later slice, or
    /// a delivery after an earlier one committed some of it) must not count them again.
    mutating func leaveOutInvalidTokens(of job: PreparedJob) {
        guard batch.seq == 0 && batch.attempt == 1 && batch.tokens != nil else { return }
        writeBack.targeted -= job.invalidTokenCount
        writeBack.rejectedTokens = 0
    }

    /// Whether `job`'s `apns-expiration` has passed at `now` (seconds since 1970): then nothing is sent.
    static func isExpired(_ job: PreparedJob, now: Int64) -> Bool {
        guard let expiration = job.template.expiration, expiration != 0 else { return false }
        return expiration < now
    }

    /// Records `devices` devices as expired; returns the tally to count.
    mutating func expire(devices: Int) -> [Tally: Int] {
        writeBack.expired = devices
        return [Tally(outcome: .expired, reason: ""): devices]
    }

    /// The one batch (seq 0, attempt 1) of a small job: its listed tokens are the unit's, and only its key is used
    /// (a retry or park lists the failed tokens itself).
    static func firstBatch(of job: PreparedJob) -> BatchMessage {
        BatchMessage(app: job.app, job: job.id, seq: 0, attempt: 1, tokens: [])
    }

    /// Why a job whose app left the apps file is stopped.
    static func appGone(_ job: PreparedJob) -> String { "app \(job.app) is no longer in the apps file" }
}
