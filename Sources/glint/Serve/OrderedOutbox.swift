#if Serve
/// Messages that must leave in the order they were queued while some are still being made (a
/// frame's PNG encodes in the background as the next frame renders): each message takes a ticket
/// when it is queued, and goes out once every message queued before it has gone out or been
/// dropped. Not thread-safe by itself: ServeSession keeps it under its lock.
struct OrderedOutbox<Message> {
    /// The next ticket to hand out.
    private var issued = 0
    /// The ticket whose message goes out next.
    private var due = 0
    /// Finished messages waiting for an earlier one (nil: dropped).
    private var finished: [Int: Message?] = [:]

    /// Messages queued and not yet out or dropped.
    var waiting: Int { issued - due }

    /// A place in the order for a message that will be finished later.
    mutating func ticket() -> Int {
        defer { issued += 1 }
        return issued
    }

    /// Finishes the message of `ticket` (nil drops it) and returns the messages now due, in
    /// order: none while an earlier ticket is unfinished.
    mutating func finish(_ ticket: Int, _ message: Message?) -> [Message] {
        precondition(ticket >= due && ticket < issued && finished[ticket] == nil, "ticket \(ticket) finished twice or never issued")
        finished[ticket] = .some(message)
        var out: [Message] = []
        while let entry = finished.removeValue(forKey: due) {
            due += 1
            if let message = entry { out.append(message) }
        }
        return out
    }
}
#endif
