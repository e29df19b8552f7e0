import APNSCore
import HeraldCore
import HeraldStore

/// Walks a job's audience a page at a time, so that a worker's memory does not grow with the audience: explicit
/// tokens in chunks, everything else by keyset pages from PostgreSQL (token order, `token > last`).
///
/// An empty audience yields one empty page, so that the job is still recorded.
struct AudiencePager {
    let job: PreparedJob
    let store: Store
    let pageSize: Int
    private var cursor: String? = nil
    private var index = 0
    private var yielded = false
    private var finished = false

    init(job: PreparedJob, store: Store, pageSize: Int) {
        self.job = job
        self.store = store
        self.pageSize = pageSize
    }

    mutating func next() async throws(StoreError) -> [DeviceToken]? {
        guard !finished else { return nil }
        let page: [DeviceToken]
        switch job.audience {
        case .tokens(let tokens):
            page = Array(tokens[index..<min(index + pageSize, tokens.count)])
            index += page.count
            finished = index >= tokens.count
        case .users(let users):
            page = try await nextPage(.users(users))
        case .topic(let topic):
            page = try await nextPage(.topic(topic))
        case .all:
            page = try await nextPage(.all)
        }
        if page.isEmpty {
            finished = true
            if yielded { return nil }
        }
        yielded = true
        return page
    }

    private mutating func nextPage(_ filter: DeviceFilter) async throws(StoreError) -> [DeviceToken] {
        let devices = try await store.devicesPage(app: job.app, filter: filter, after: cursor, limit: pageSize)
        cursor = devices.last?.token.hex
        if devices.count < pageSize { finished = true }
        return devices.map(\.token)
    }
}
