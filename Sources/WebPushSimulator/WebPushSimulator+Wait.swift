import Synchronization

extension WebPushSimulator {
    /// Waits until at least `count` messages were accepted (201). Returns early if the task is cancelled or the
    /// simulator stops.
    public func waitForRecords(count: Int) async {
        await wait(.records, count: count)
    }

    /// Waits until at least `count` requests were answered (or dropped). Returns early if the task is cancelled or
    /// the simulator stops.
    public func waitForRequests(count: Int) async {
        await wait(.requests, count: count)
    }

    private func wait(_ kind: SimulatorState.WaitKind, count: Int) async {
        enum Registration {
            case initial
            case waiting(Int)
            case done
        }
        let registration = Mutex(Registration.initial)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                registration.withLock { registration in
                    guard case .initial = registration else {
                        continuation.resume()
                        return
                    }
                    if let id = state.withLock({ $0.addWaiter(kind, count: count, continuation: continuation) }) {
                        registration = .waiting(id)
                    } else {
                        registration = .done
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            registration.withLock { registration in
                if case .waiting(let id) = registration {
                    state.withLock { $0.removeWaiter(id) }?.resume()
                }
                registration = .done
            }
        }
    }
}
