import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Raw video frames read from a file descriptor (standard input): 8-bit RGBA, rows top to
/// bottom, exactly width * height * 4 bytes each, back to back, as
/// `ffmpeg ... -pix_fmt rgba -f rawvideo -` writes them.
///
/// Each frame is read straight into the array it is returned in, as much of it as each read(2)
/// gives (a pipe gives what is there, at most its buffer), until the frame is whole. Short
/// reads, EINTR, and a descriptor left non-blocking by the program that made it are all waited
/// out; only the end of the input, or `stop` answering true while the input is idle, stops a
/// frame short.
struct RawFrameReader {
    /// What the next read found.
    enum Next {
        /// A whole frame.
        case frame(Image8)
        /// The input ended cleanly, between frames.
        case end
        /// The input ended inside a frame, after `received` of its bytes.
        case truncated(received: Int)
    }

    let fd: Int32
    let width: Int, height: Int
    /// Names the input in errors ("standard input").
    let name: String

    /// The size is checked against the image limits before any frame is allocated.
    init(fd: Int32, width: Int, height: Int, name: String) throws(GlintError) {
        try ImageLimits.check(width: width, height: height)
        self.fd = fd
        self.width = width
        self.height = height
        self.name = name
    }

    var frameBytes: Int { width * height * 4 }

    /// How often an idle input is woken to ask `stop` (a read blocked on a pipe is not ended by
    /// a signal whose handler restarts it).
    static let idleCheckMilliseconds: Int32 = 100

    /// Reads the next frame. While no bytes are waiting, `stop` is asked every
    /// `idleCheckMilliseconds`; when it answers true the frame ends where it is (`.end` before
    /// its first byte, `.truncated` after).
    func next(stop: () -> Bool = { false }) throws(GlintError) -> Next {
        let count = frameBytes
        var received = 0
        var failure: GlintError?
        // Only the bytes read are ever counted as initialised: a frame cut short is dropped.
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            while received < count {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, Self.idleCheckMilliseconds)
                if ready <= 0 {
                    // A timeout or a signal: nothing to read yet.
                    if stop() { break }
                    if ready == 0 || errno == EINTR { continue }
                }
                let n = Glibc.read(fd, base + received, count - received)
                if n > 0 {
                    received += n
                    continue
                }
                if n == 0 { break }
                let err = errno
                if err == EINTR { continue }
                if err == EAGAIN || err == EWOULDBLOCK { continue }
                failure = GlintError("cannot read \(name): \(String(cString: strerror(err)))")
                break
            }
            initialized = received
        }
        if let failure { throw failure }
        if received == count { return .frame(Image8(width: width, height: height, pixels: pixels)) }
        return received == 0 ? .end : .truncated(received: received)
    }
}
