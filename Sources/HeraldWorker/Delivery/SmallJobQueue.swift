import Synchronization

/// Small jobs in hand, waiting to be delivered in groups.
///
/// Group commit without a timer: the first job finds no group under way and its task starts delivering at once;
/// jobs that arrive meanwhile wait here, and the next group takes all of them (up to `maximumGroup`). Under light
/// load each job goes alone; under heavy load the database work per job shrinks with the group size. Another group
/// starts alongside only when a full group is waiting (up to `maximumRunners` at once), so that groups stay large
/// and one group's database round trips overlap another's sends.
final class SmallJobQueue: Sendable {
    private struct State {
        var pending: [RoutedJob] = []
        var runners = 0
    }

    let maximumRunners: Int
    let maximumGroup: Int
    private let state = Mutex(State())

    init(maximumRunners: Int, maximumGroup: Int) {
        self.maximumRunners = max(1, maximumRunners)
        self.maximumGroup = max(1, maximumGroup)
    }

    /// Adds a job. Returns true if the caller is to deliver groups (`nextGroup()` until it returns nil).
    func add(_ item: RoutedJob) -> Bool {
        state.withLock { state in
            state.pending.append(item)
            // A runner under way takes what waits when it is done; start another only if it is overwhelmed.
            guard state.runners == 0 || (state.pending.count >= maximumGroup && state.runners < maximumRunners) else {
                return false
            }
            state.runners += 1
            return true
        }
    }

    /// The next group, or nil when none is waiting (and the caller stops delivering).
    func nextGroup() -> [RoutedJob]? {
        state.withLock { state in
            guard !state.pending.isEmpty else {
                state.runners -= 1
                return nil
            }
            let count = min(state.pending.count, maximumGroup)
            let group = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            return group
        }
    }
}
