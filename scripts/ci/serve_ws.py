"""What the serve scripts share (test-serve-load.py, fuzz-serve.py, scripts/bench/serve-latency.py): a minimal WebSocket client (RFC 6455, stdlib only), a PNG maker, and the serving process's pid, memory and stop."""
import base64, os, socket, struct, sys, zlib


def png(width, height):
    """A small RGB PNG made here (stdlib only)."""
    raw = b"".join(b"\0" + bytes((x * 7 + y * 3) & 255 for x in range(width) for _ in range(3)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


class WebSocket:
    """Just enough of RFC 6455 for a client: text out, text and binary in, pongs."""
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"WebSocket upgrade refused: {head[:80]!r}")

    def send(self, data, opcode=1):
        if isinstance(data, str):
            data = data.encode()
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                          bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                          bytes([0x80 | 127]) + struct.pack(">Q", n))
        # XOR as whole integers: camera frames are megabytes.
        key = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(data, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big") if n else b""
        self.sock.sendall(head + mask + masked)

    def _read(self, n):
        out = b""
        while len(out) < n:
            part = self.sock.recv(n - len(out))
            if not part:
                raise EOFError("the server closed the connection")
            out += part
        return out

    def recv(self):
        data, kind = b"", None
        while True:
            b0, b1 = self._read(2)
            op, n = b0 & 0xF, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            if op == 9:
                self.send(payload, opcode=10)
                continue
            if op == 10:
                continue
            if op == 8:
                raise EOFError("closed")
            if op:
                kind = op
            data += payload
            if b0 & 0x80:
                return data.decode() if kind == 1 else data

    def close(self):
        try:
            self.send(b"", opcode=8)
            self.sock.close()
        except OSError:
            pass


def device_workers(pid):
    """The device workers under `glint serve` (its child processes)."""
    try:
        return [int(k) for t in os.listdir(f"/proc/{pid}/task") for k in open(f"/proc/{pid}/task/{t}/children").read().split()]
    except OSError:
        return []


def workers_mib(pid, field):
    """`field` of /proc/PID/status (VmRSS, VmHWM) summed over the server's device workers, in MiB."""
    return sum(status_mib(w, field) for w in device_workers(pid))


def stop_server(server, timeout=20):
    """SIGTERM to `glint serve` and wait: None when it ended with status 0, else what went wrong."""
    import subprocess
    server.terminate()
    try:
        code = server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()
        return f"glint serve did not stop within {timeout} s of SIGTERM"
    return None if code == 0 else f"glint serve exited {code} on SIGTERM"


def status_mib(pid, field):
    """A memory figure of /proc/PID/status (VmRSS: now, VmHWM: the peak) in MiB; 0 when gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def report(failures):
    """Prints the failures (and exits 1) or PASS."""
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures[:30]))
        sys.exit(1)
    print("PASS")
