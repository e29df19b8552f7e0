import APNSCore
import HeraldCore
import HeraldStore

/// A batch settled in slices (`DeliveryRun.deliver`): every slice but the last commits at once what it settled,
/// and holds its transient failures back for the batch's end, where the last slice's plan takes them in.
extension SettlementPlan {
    /// What a slice before the last commits now: everything but its transient failures (settled with no attempt
    /// limit, so none is parked or failed here), which it hands back to be held.
    func holdingTransient() -> (now: SettlementPlan, held: [DeviceToken]) {
        var now = self
        let held = transient
        now.transient = []
        now.transientReasons = ""
        now.retried = 0
        now.next = .nothing
        now.tally[Tally(outcome: .retried, reason: "transient")] = nil
        return (now, held)
    }

    /// The last slice's plan with the transient failures earlier slices held (`held`, this delivery's and an
    /// earlier one's) taken in, by the rule `Settlement.plan` applies to its own: retried on the batch's next
    /// attempt, parked and failed after its last, failed as they are when the job stops.
    func takingIn(held: [DeviceToken], attempt: Int, maximumAttempts: Int) -> SettlementPlan {
        guard !held.isEmpty else { return self }
        var plan = self
        let reason = "held from an earlier slice"
        if plan.stop != nil {
            for token in held { plan.failures.append(.init(token: token, status: nil, reason: reason)) }
            return plan
        }
        plan.transient += held
        if plan.transientReasons.isEmpty { plan.transientReasons = reason }
        if attempt < maximumAttempts {
            plan.next = .retry(attempt: attempt + 1)
            if attempt == 1 { plan.retried += held.count }
            plan.tally[Tally(outcome: .retried, reason: "transient"), default: 0] += held.count
        } else {
            plan.next = .park
            for token in held {
                plan.failures.append(.init(token: token, status: nil, reason: "\(reason) (after \(attempt) attempts)"))
            }
            plan.tally[Tally(outcome: .failed, reason: "exhausted"), default: 0] += held.count
        }
        return plan
    }
}
