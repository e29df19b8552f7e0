import Foundation
import Glibc
import Testing

@testable import RabbitMQ

/// The connection thread's mailbox: plain acks are queued without waking the thread until enough wait, anything
/// else wakes it at once.
@Suite struct MailboxTests {
    private func isAwake(_ mailbox: Mailbox) -> Bool {
        var descriptor = pollfd(fd: mailbox.wakeDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1
    }

    private func ack(_ tag: UInt64) -> Command {
        .settle(
            Settlement(
                buffer: DeliveryBuffer(), channel: 1, generation: 0, deliveryTag: tag, kind: .ack(multiple: false)))
    }

    @Test func unannouncedCommandsWakeTheThreadOnlyOnceEnoughWait() {
        let mailbox = try! Mailbox()
        for tag in 1..<UInt64(Mailbox.unannouncedLimit) {
            #expect(mailbox.submit(ack(tag), announce: false) == nil)
        }
        #expect(!isAwake(mailbox))
        #expect(mailbox.submit(ack(UInt64(Mailbox.unannouncedLimit)), announce: false) == nil)
        #expect(isAwake(mailbox))
        mailbox.acknowledgeWakeUp()
        var batch: [Command] = []
        mailbox.takeAll(into: &batch)
        #expect(batch.count == Mailbox.unannouncedLimit)

        // The count starts again after the thread drained the mailbox; an announced command wakes it at once and
        // is taken with the unannounced ones before it, in order.
        batch.removeAll()
        #expect(mailbox.submit(ack(100), announce: false) == nil)
        #expect(!isAwake(mailbox))
        #expect(mailbox.submit(ack(101)) == nil)
        #expect(isAwake(mailbox))
        mailbox.acknowledgeWakeUp()
        mailbox.takeAll(into: &batch)
        let tags = batch.compactMap { command -> UInt64? in
            if case .settle(let settlement) = command { return settlement.deliveryTag }
            return nil
        }
        #expect(tags == [100, 101])
    }

    /// What the connection thread queues itself (a consumer iterating on its executor acks there, a task it resumed
    /// is queued there) wakes nothing: the thread takes it before it next waits, and `hasWork` keeps it from
    /// sleeping meanwhile. The same from another thread wakes it. Synchronous, so that the test stays on the thread
    /// it adopted.
    @Test func whatTheThreadQueuesItselfWakesNothingAndIsWorkUntilTaken() {
        let mailbox = try! Mailbox()
        mailbox.adoptCurrentThread()
        #expect(!mailbox.hasWork)
        #expect(mailbox.submit(ack(1)) == nil)
        #expect(!isAwake(mailbox))
        #expect(mailbox.hasWork)
        var batch: [Command] = []
        mailbox.takeAll(into: &batch)
        #expect(batch.count == 1)
        #expect(!mailbox.hasWork)

        // From another thread (a new one: never the adopted thread, which waits for it): an announced command wakes
        // the thread; a plain ack without announcing is not work that keeps it awake (it waits for the next turn).
        func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
            let done = DispatchSemaphore(value: 0)
            Thread {
                body()
                done.signal()
            }.start()
            done.wait()
        }
        let announced = ack(2)
        onAnotherThread { _ = mailbox.submit(announced) }
        #expect(isAwake(mailbox))
        mailbox.acknowledgeWakeUp()
        batch.removeAll()
        mailbox.takeAll(into: &batch)
        let plain = ack(3)
        onAnotherThread { _ = mailbox.submit(plain, announce: false) }
        #expect(!isAwake(mailbox))
        #expect(!mailbox.hasWork)
    }
}
