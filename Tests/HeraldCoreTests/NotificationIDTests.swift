import APNSCore
import HeraldCore
import Testing

/// Every send of a job's notification to a device carries the same apns-id, and no two (app, job, device) share
/// one in practice.
@Suite struct NotificationIDTests {
    static let token = DeviceToken(trustedHex: "ad853c203a9b0000")

    @Test func anIdIsACanonicalVersion8UUIDAndTheSameForEverySend() {
        let id = NotificationID(app: "com.example.news", job: "order-42").id(for: Self.token).description
        #expect(APNSRequest.isCanonicalUUID(id))
        #expect(Array(id.utf8)[14] == UInt8(ascii: "8"))  // the version nibble
        #expect("89ab".utf8.contains(Array(id.utf8)[19]))  // the variant
        #expect(NotificationID(app: "com.example.news", job: "order-42").id(for: Self.token).description == id)
    }

    @Test func theAppTheJobAndTheDeviceEachChangeIt() {
        let ids = [
            NotificationID(app: "a", job: "j").id(for: Self.token),
            NotificationID(app: "b", job: "j").id(for: Self.token),
            NotificationID(app: "a", job: "k").id(for: Self.token),
            NotificationID(app: "a", job: "j").id(for: DeviceToken(trustedHex: "ad853c203a9b0001")),
            // The separator keeps ("ab", "c") apart from ("a", "bc").
            NotificationID(app: "ab", job: "c").id(for: Self.token),
            NotificationID(app: "a", job: "bc").id(for: Self.token),
        ]
        #expect(Set(ids).count == ids.count)
        let many = Set((0..<100_000).map { NotificationID(app: "a", job: "j\($0)").id(for: Self.token) })
        #expect(many.count == 100_000)
    }
}
