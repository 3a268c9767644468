#if Serve
import Glibc
import GlintCore
import Synchronization

/// `glint serve` as two processes: this one supervises, a second (the same command, marked by
/// `workerVariable`) serves. An OpenCL driver may abort the process it runs in (PoCL does when
/// it cannot write a kernel); then only the worker dies: the supervisor removes its temporary
/// folder and starts a new one on the same port with the same token, so the server is back
/// within seconds and pages reconnect, losing only the requests in flight.
enum ServeSupervisor {
    /// Set in the worker: the descriptor it writes its bound port to once it listens.
    static let workerVariable = "GLINT_SERVE_WORKER"
    /// The worker's temporary folder, made (and removed) by the supervisor.
    static let folderVariable = "GLINT_SERVE_FOLDER"
    /// The port a restarted worker listens on: the first one's.
    static let portVariable = "GLINT_SERVE_PORT"
    /// The token a generated one stays across restarts (the environment, unlike argv, is not public).
    static let tokenVariable = "GLINT_SERVE_TOKEN"
    /// Restarts allowed within `restartWindow` seconds before the supervisor gives up.
    static let maxRestarts = 5
    static let restartWindow = 60.0

    private static let child = Atomic<Int32>(0)
    private static let stopping = Atomic<Bool>(false)

    static var isWorker: Bool { FileIO.environment(workerVariable) != nil }

    /// Runs workers until one ends other than by a signal (its exit status is returned), or a
    /// stop was asked for (SIGINT or SIGTERM, passed on to the worker as SIGTERM).
    static func supervise(token: String?) throws -> Int32 {
        if let token { setenv(tokenVariable, token, 1) }
        for sig in [SIGINT, SIGTERM] {
            signal(sig) { _ in
                ServeSupervisor.stopping.store(true, ordering: .relaxed)
                let pid = ServeSupervisor.child.load(ordering: .relaxed)
                if pid > 0 { kill(pid, SIGTERM) }
            }
        }
        var restarts: [Double] = []
        var port: String?
        while true {
            let folder = try FileIO.makeTemporaryFolder(prefix: "glint-serve")
            defer { FileIO.removeTree(folder) }
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw GlintError("cannot make a pipe for the server process: \(FileIO.errnoText())") }
            setenv(workerVariable, String(fds[1]), 1)
            setenv(folderVariable, folder, 1)
            if let port { setenv(portVariable, port, 1) }
            let pid: pid_t
            do {
                pid = try Subprocess.spawn(["/proc/self/exe"] + CommandLine.arguments.dropFirst(), closeInChild: [fds[0]])
            } catch {
                close(fds[0]); close(fds[1])
                throw GlintError("cannot start the server process: \(error.reason)")
            }
            close(fds[1])
            child.store(pid, ordering: .relaxed)
            if stopping.load(ordering: .relaxed) { kill(pid, SIGTERM) }
            // The worker's port once it listens (nothing when it could not start: its error is
            // already on stderr).
            if let line = readLine(fds[0]), port == nil { port = line }
            close(fds[0])
            let ending = Subprocess.wait(pid)
            child.store(0, ordering: .relaxed)
            guard case .killed(let sig) = ending, !stopping.load(ordering: .relaxed), let port else {
                if case .exited(let code) = ending { return code }
                return stopping.load(ordering: .relaxed) ? 0 : 1
            }
            let now = Clock.now()
            restarts = restarts.filter { now - $0 < restartWindow } + [now]
            let name = String(cString: strsignal(sig))
            guard restarts.count <= maxRestarts else {
                throw GlintError("the server process was ended by \(name) \(restarts.count) times within \(Int(restartWindow)) s; giving up")
            }
            let text = "glint serve: the server process was ended by \(name) (signal \(sig); an OpenCL driver's abort, most likely): its requests in flight are lost; starting it again on port \(port)\n"
            _ = Array(text.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
    }

    /// The worker's side: the port it listens on, for its supervisor.
    static func tellPort(_ port: Int) {
        guard let text = FileIO.environment(workerVariable), let fd = Int32(text) else { return }
        let line = Array("\(port)\n".utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// One line from `fd` (without its newline), or nil at its end.
    private static func readLine(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n == 1 {
                if byte == 10 { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return nil
            }
        }
    }
}
#endif
