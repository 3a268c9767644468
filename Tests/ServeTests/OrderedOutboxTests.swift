#if Serve
import Testing
@testable import glint

/// The order of a connection's replies while frames encode in the background: a reply goes out
/// only after every one queued before it, whichever finishes first.
@Suite struct OrderedOutboxTests {
    @Test func repliesLeaveInTheOrderTheyWereQueued() {
        var box = OrderedOutbox<String>()
        let preview = box.ticket(), final = box.ticket(), done = box.ticket()
        #expect(box.waiting == 3)
        // "done" and the final frame finish before the preview's PNG: nothing may go out yet.
        #expect(box.finish(done, "done").isEmpty)
        #expect(box.finish(final, "final").isEmpty)
        #expect(box.finish(preview, "preview") == ["preview", "final", "done"])
        #expect(box.waiting == 0)
    }

    @Test func aDroppedReplyHoldsNothingUp() {
        var box = OrderedOutbox<Int>()
        let tickets = (0..<6).map { _ in box.ticket() }
        #expect(box.finish(tickets[1], 1).isEmpty)
        #expect(box.finish(tickets[0], nil) == [1])
        #expect(box.finish(tickets[3], 3).isEmpty)
        #expect(box.finish(tickets[2], 2) == [2, 3])
        #expect(box.finish(tickets[5], nil).isEmpty)
        #expect(box.finish(tickets[4], 4) == [4])
        #expect(box.waiting == 0)
        // A ticket after everything has gone out goes out at once.
        let late = box.ticket()
        #expect(box.finish(late, 9) == [9])
    }

    @Test func manyInterleavedFinishesKeepTheOrder() {
        var box = OrderedOutbox<Int>()
        var out: [Int] = []
        var open: [Int] = []
        var rng = 0x2545_F491_4F6C_DD1D as UInt64
        for _ in 0..<500 {
            open.append(box.ticket())
            // Finish a random open ticket now and then, as encodes of different sizes would.
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            if open.count > 3 || rng >> 63 == 1 {
                let pick = Int(rng >> 33) % open.count
                let t = open.remove(at: pick)
                out += box.finish(t, t)
            }
        }
        for t in open.shuffled() { out += box.finish(t, t) }
        #expect(out == Array(0..<500))
    }
}
#endif
