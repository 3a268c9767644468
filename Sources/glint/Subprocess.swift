import CGlintTypes
import GlintCore
#if canImport(Glibc)
import Glibc
#endif

/// Child processes started with posix_spawn: ffmpeg for --video, glint itself for
/// `glint devices --calibrate`.
enum Subprocess {
    struct SpawnError: Error {
        /// strerror's text.
        let reason: String
    }

    /// Starts the program at `args[0]` with `args` and this process's environment: standard input
    /// from `stdin` when given, `closeInChild` closed in the child, standard output to /dev/null
    /// when `quietStdout`. Returns the child's pid.
    /// `dups`: descriptors given to the child under other numbers; `closeFrom`: every descriptor
    /// from that number up is closed in the child; `environment`: variables added to this
    /// process's for the child ("NAME=VALUE").
    static func spawn(_ args: [String], stdin: Int32? = nil, closeInChild: [Int32] = [],
                      quietStdout: Bool = false, dups: [(Int32, Int32)] = [], closeFrom: Int32? = nil,
                      environment: [String] = []) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        for (from, to) in dups { posix_spawn_file_actions_adddup2(&actions, from, to) }
        for fd in closeInChild { posix_spawn_file_actions_addclose(&actions, fd) }
        if let closeFrom { _ = glint_spawn_closefrom(&actions, closeFrom) }
        if quietStdout { posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) }
        // The child starts with no signal blocked: the calling thread may be one of the
        // concurrency pool's, which may block signals, and a mask is inherited across exec.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let cArgs = args.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var child: pid_t = 0
        var env: [UnsafeMutablePointer<CChar>?] = []
        var p = environ
        while let entry = p.pointee { env.append(strdup(entry)); p += 1 }
        env += environment.map { strdup($0) }
        env.append(nil)
        defer { for e in env { free(e) } }
        let status = posix_spawn(&child, args[0], &actions, &attributes, cArgs, env)
        guard status == 0 else { throw SpawnError(reason: String(cString: strerror(status))) }
        return child
    }

    /// How a child ended.
    enum Ending: Equatable {
        case exited(Int32)
        case killed(signal: Int32)
        /// waitpid failed (the errno text).
        case lost(String)

        var succeeded: Bool { self == .exited(0) }

        /// "exit status N", "killed by signal N" or why the wait failed.
        var text: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .killed(let signal): "killed by signal \(signal)"
            case .lost(let why): "lost track of it: \(why)"
            }
        }
    }

    /// Waits for `pid` to end (retrying when a signal interrupts the wait).
    static func wait(_ pid: pid_t) -> Ending {
        var status: Int32 = 0
        var waited: pid_t
        repeat { waited = waitpid(pid, &status, 0) } while waited < 0 && errno == EINTR
        guard waited == pid else { return .lost(FileIO.errnoText()) }
        let signal = status & 0x7f
        return signal != 0 ? .killed(signal: signal) : .exited((status >> 8) & 0xff)
    }
}
