#!/usr/bin/env python3
"""Load test of `glint serve` on loopback: N concurrent clients send R requests in all (small
fractal views at different centres, /api/info, uploads) while WebSocket clients pan a view,
against a server with a small render gate, so that some requests are refused as busy.

Passes when every answer is 200 or a deliberate 503 (JSON with an error line and Retry-After),
the server's peak memory stays under the bound, and it still answers afterwards.

Usage: scripts/ci/test-serve-load.py [--glint PATH] [--clients 20] [--requests 500] [--device cpu]
"""
import argparse, http.client, json, os, random, struct, subprocess, sys, threading, time, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_ws import WebSocket, png, report, status_mib, stop_server, workers_mib  # noqa: E402


def reply_order(port):
    """Frames' PNGs encode in the background while the next frame renders; the replies must still
    come in order: a preview frame, perhaps a pass, then the final frame, then "done", each frame's JSON followed
    by its PNG; a live view's frames in order, each with its PNG, until "stop". Returns failures."""
    problems = []
    ws = WebSocket(port)
    try:
        ws.send(json.dumps({"type": "render", "id": 7, "preview": True, "workload": "fractal",
                            "args": ["mandelbrot", "--size", "320x200", "--iterations", "300"]}))
        seen = []
        while not seen or seen[-1] != "done":
            m = ws.recv()
            if isinstance(m, bytes):
                if not seen or not seen[-1].startswith("frame") or not m.startswith(b"\x89PNG"):
                    problems.append(f"a PNG came after {seen[-1:]} instead of after its frame's JSON")
                seen.append("png")
                continue
            doc = json.loads(m)
            if doc.get("type") == "error":
                problems.append(f"the render failed: {doc}")
                break
            seen.append(f"frame:{doc['stage']}" if doc.get("type") == "frame" else doc.get("type"))
        # A half-size pass comes between when the whole picture would take over 150 ms (docs/SERVE.md).
        in_order = (["frame:preview", "png", "frame:final", "png", "done"],
                    ["frame:preview", "png", "frame:pass", "png", "frame:final", "png", "done"])
        if not problems and seen not in in_order:
            problems.append(f"a render's replies came as {seen}, not preview, PNG, [pass, PNG,] final, PNG, done")
        ws.send(json.dumps({"type": "pulse", "id": 8, "args": ["--size", "256x128"]}))
        expect_png, frames = False, 0
        while frames < 12 and not problems:
            m = ws.recv()
            if isinstance(m, bytes):
                if not expect_png:
                    problems.append("a live view sent a PNG without its frame's JSON")
                expect_png = False
                frames += 1
                continue
            doc = json.loads(m)
            if expect_png or doc.get("type") != "frame" or doc.get("id") != 8 or doc.get("width") != 256:
                problems.append(f"a live view sent {doc} where its next frame was due")
            expect_png = True
        ws.send(json.dumps({"type": "stop"}))
    except (OSError, EOFError, ValueError) as e:
        problems.append(f"reply order: {e}")
    finally:
        ws.close()
    if not problems:
        print("reply order: a render's preview, final and done, and 12 live frames, each JSON then its PNG")
    return problems


def connection_bounds(glint, device):
    """A server of its own with --max-connections 16 and --idle-timeout 2, jammed by 40 half-sent
    requests and idle WebSockets: past the cap a connection must get a JSON 503 at once (the
    server still answers), and once the half-sent ones time out a request must get a 200.
    Returns failures."""
    import socket
    problems = []
    srv = subprocess.Popen([glint, "serve", "--port", "0", "--device", device, "--max-connections", "16",
                            "--idle-timeout", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    held = []
    try:
        port = int(srv.stdout.readline().split("http://127.0.0.1:")[1].split("/")[0])

        def info():
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            s.close()
            return data.split(b"\r\n")[0].decode(), data.split(b"\r\n\r\n", 1)[-1]

        jammed = time.time()
        sockets = [WebSocket(port) for _ in range(6)]
        held += [w.sock for w in sockets]
        for _ in range(34):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0")
            held.append(s)
        time.sleep(0.5)
        t = time.time()
        status, body = info()
        answered = time.time() - t
        if " 503 " not in status + " " or b"--max-connections" not in body:
            problems.append(f"past --max-connections 16 a request got {status!r} {body[:100]!r}, not a JSON 503")
        refused = 0
        for s in held[6:]:
            s.settimeout(0.2)
            try:
                refused += s.recv(4096).startswith(b"HTTP/1.1 503")
            except OSError:
                pass
        t = time.time()
        while time.time() - t < 10:
            status, _ = info()
            if " 200 " in status + " ":
                break
            time.sleep(0.25)
        recovered = time.time() - jammed
        if " 200 " not in status + " ":
            problems.append(f"10 s after the half-sent requests, a request still got {status!r}")
        else:
            print(f"connections: 40 held against --max-connections 16: {refused} of 34 half-sent refused with a 503, "
                  f"a request past the cap answered 503 in {answered * 1000:.0f} ms; the half-sent closed by "
                  f"--idle-timeout 2, a request answered 200 {recovered:.1f} s after the jam began")
    except (OSError, EOFError, ValueError, IndexError, RuntimeError) as e:
        problems.append(f"connection bounds: {type(e).__name__}: {e}")
    finally:
        for s in held:
            s.close()
        stop_server(srv)
    return problems


def slow_readers(port, pid, clients=6, seconds=12):
    """Clients that ask for 1200x800 renders twice a second and never read: each connection's
    reply queue is bounded (16 MiB), so the server's memory grows by at most that much a client,
    and falls back once they have gone. Returns failures."""
    import socket
    before = status_mib(pid, "VmRSS")
    sockets = []
    for _ in range(clients):
        ws = WebSocket(port)
        ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sockets.append(ws)
    peak, i, t = before, 0, time.time()
    while time.time() - t < seconds:
        for ws in sockets:
            i += 1
            ws.send(json.dumps({"type": "render", "id": i, "workload": "fractal",
                                "args": ["mandelbrot", "--size", "1200x800", "--center", f"{-0.75 + 0.001 * i:.4f},0"]}))
        time.sleep(0.5)
        peak = max(peak, status_mib(pid, "VmRSS"))
    for ws in sockets:
        ws.sock.close()
    time.sleep(3)
    after = status_mib(pid, "VmRSS")
    print(f"slow readers: {clients} clients sent {i} renders in {seconds} s and read nothing: RSS {before:.0f} MiB before, "
          f"{peak:.0f} at most, {after:.0f} 3 s after they closed")
    problems = []
    if peak - before > clients * 24:
        problems.append(f"{clients} clients that never read grew the server by {peak - before:.0f} MiB (bound {clients * 24})")
    if after - before > 64:
        problems.append(f"the server kept {after - before:.0f} MiB after the slow readers left")
    return problems


def noise_png(width, height, seed=1):
    """An RGB PNG of random pixels: it does not compress, so it is as large as its pixels."""
    import random
    rng = random.Random(seed)
    raw = b"".join(b"\0" + rng.randbytes(width * 3) for _ in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def full_queue(port, pid, frames=3, side=2000, queue_mib=16):
    """One client that asks for pictures that hardly compress (a light blur of noise, about
    11 MiB a PNG) and never reads: its reply queue fills to its bound, the replies past it are
    dropped (counted in /api/info's load), and the server grows by about the bound rather than
    by everything it was asked for. Each render is let finish before the next (a new view
    cancels the one in flight, and a cancelled view's frames are never queued). Returns failures."""
    import http.client
    import socket
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/api/upload", body=noise_png(side, side), headers={"Content-Type": "image/png"})
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        return [f"full queue: the noise upload answered {r.status} {body[:200]!r}"]
    token = json.loads(body)["id"]

    def load():
        conn.request("GET", "/api/info")
        return json.loads(conn.getresponse().read())["load"]

    def dropped():
        return load()["dropped_replies"]

    before, dropped_before = status_mib(pid, "VmRSS"), dropped()
    ws = WebSocket(port)
    ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    peak = before
    frame_mib = side * side * 3 / (1 << 20)
    for i in range(frames):
        ws.send(json.dumps({"type": "render", "id": i, "workload": "blur", "args": [token, "--sigma", "0.5"]}))
        # Rendered, then a second for its PNG to be encoded and queued.
        t = time.time()
        while time.time() - t < 60:
            time.sleep(0.2)
            peak = max(peak, status_mib(pid, "VmRSS"))
            if time.time() - t > 0.5 and load()["running"] == 0:
                break
        for _ in range(5):
            time.sleep(0.2)
            peak = max(peak, status_mib(pid, "VmRSS"))
    gone = dropped() - dropped_before
    ws.sock.close()
    # The connection's end frees its queue and hands the pages back; memory freed later by other
    # threads may stay with malloc a while (as the slow readers' check allows).
    t = time.time()
    while True:
        time.sleep(0.25)
        after = status_mib(pid, "VmRSS")
        if after - before <= queue_mib or time.time() - t > 3:
            break
    settled = time.time() - t
    print(f"full queue: a client asked for {frames} renders of {frame_mib:.1f} MiB each and read nothing: {gone} replies dropped "
          f"past its {queue_mib} MiB queue; RSS {before:.0f} MiB before, {peak:.0f} at most, {after:.0f} {settled:.1f} s after it closed")
    problems = []
    if gone < 1:
        problems.append(f"full queue: {frames} frames of {frame_mib:.1f} MiB to a client that never reads, yet no reply was dropped")
    # The queue, the socket layer's copy of the frame it is sending and the PNG encoder's output
    # for the next; three frames' pixels (one arriving from the device worker, the last picture,
    # kept for iso of the view, and one being encoded); 16 MiB for the rest.
    raw_mib = side * side * 4 / (1 << 20)
    bound = queue_mib + 2 * frame_mib + 3 * raw_mib + 16
    if peak - before > bound:
        problems.append(f"full queue: the server grew by {peak - before:.0f} MiB for one client that never reads (bound {bound:.0f})")
    if after - before > 64:
        problems.append(f"full queue: the server kept {after - before:.0f} MiB after the client left")
    return problems


def camera_frames(port, max_body=32 << 20):
    """A camera frame is one WebSocket frame, as a browser sends it: a 640x480 RGBA frame (1.2 MB)
    must reach the session (here, with no camera view, it answers that a mist view must start
    first), and one just over --max-body must get a JSON error naming the limit. Returns failures."""
    problems = []
    for size, expect in [(640 * 480 * 4, "start a mist view"), (max_body + 1000, "--max-body")]:
        ws = WebSocket(port)
        try:
            ws.send(bytes(size), opcode=2)
            doc = json.loads(ws.recv())
            if doc.get("type") != "error" or expect not in doc.get("error", ""):
                problems.append(f"a {size}-byte camera frame: expected an error saying {expect!r}, got {doc}")
        except (OSError, EOFError, ValueError) as e:
            problems.append(f"a {size}-byte camera frame: {type(e).__name__}: {e}")
        finally:
            ws.close()
    if not problems:
        print(f"camera frames: 640x480 RGBA reaches the session; {max_body + 1000} bytes gets a JSON error naming --max-body")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--glint", default=os.environ.get("GLINT", ".build/debug/glint"))
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=500)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--max-rss-mib", type=float, default=1024.0)
    ap.add_argument("--ws-clients", type=int, default=2)
    a = ap.parse_args()
    if not (1 <= a.clients <= 200 and 1 <= a.requests <= 100000):
        sys.exit("--clients must be 1..200 and --requests 1..100000")

    server = subprocess.Popen([a.glint, "serve", "--port", "0", "--device", a.device, "--max-renders", "2", "--queue", "4",
                               "--render-timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    failures = []
    try:
        line = server.stdout.readline()
        if "http://127.0.0.1:" not in line:
            sys.exit(f"FAIL: glint serve printed no address: {line!r} {server.stderr.read()[:400]}")
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        print(f"server on port {port} (pid {server.pid}, device {a.device}); {a.clients} clients, {a.requests} requests")

        counts, latencies, lock = {}, [], threading.Lock()
        todo = list(range(a.requests))
        upload = png(64, 48)

        def one(k, conn):
            kind = k % 10
            if kind == 0:
                conn.request("GET", "/api/info")
            elif kind == 1:
                conn.request("POST", "/api/upload", body=upload, headers={"Content-Type": "image/png"})
            else:
                x = -0.75 + random.uniform(-0.5, 0.5)
                body = json.dumps({"workload": "fractal", "args": ["mandelbrot", "--size", "160x100", "--center", f"{x:.6f},0.1",
                                                                     "--iterations", "200"]})
                conn.request("POST", "/api/render", body=body, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            return r.status, r.getheader("Content-Type") or "", r.getheader("Retry-After"), data

        def client():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            while True:
                with lock:
                    if not todo:
                        break
                    k = todo.pop()
                t = time.time()
                try:
                    status, ctype, retry, data = one(k, conn)
                except (OSError, http.client.HTTPException) as e:
                    with lock:
                        failures.append(f"request {k}: {type(e).__name__}: {e}")
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                    continue
                with lock:
                    latencies.append(time.time() - t)
                    counts[status] = counts.get(status, 0) + 1
                    if status == 503:
                        doc = json.loads(data)
                        if "busy" not in doc.get("error", "") or retry != "1" or ctype != "application/json":
                            failures.append(f"request {k}: a 503 without its JSON line or Retry-After: {data[:120]!r}")
                    elif status != 200:
                        failures.append(f"request {k}: HTTP {status}: {data[:160]!r}")
            conn.close()

        ws_frames = [0]
        stop = threading.Event()

        def ws_client(n):
            try:
                ws = WebSocket(port)
                i = 0
                while not stop.is_set():
                    i += 1
                    ws.send(json.dumps({"type": "render", "id": i, "workload": "fractal", "preview": True,
                                        "args": ["mandelbrot", "--size", "320x200", "--center", f"{-0.75 + 0.01 * i:.4f},0"]}))
                    # Half the time the next view comes before this one is done (it cancels it).
                    while True:
                        m = ws.recv()
                        if isinstance(m, bytes):
                            with lock:
                                ws_frames[0] += 1
                            if i % 2:
                                break
                            continue
                        doc = json.loads(m)
                        if doc["type"] == "error" and doc.get("status") != 503:
                            with lock:
                                failures.append(f"websocket {n}: {doc}")
                        if doc["type"] in ("done", "error") and doc.get("id") == i:
                            break
                ws.close()
            except (OSError, EOFError, RuntimeError) as e:
                with lock:
                    failures.append(f"websocket {n}: {type(e).__name__}: {e}")

        start = time.time()
        threads = [threading.Thread(target=client) for _ in range(a.clients)]
        sockets = [threading.Thread(target=ws_client, args=(n,)) for n in range(a.ws_clients)]
        for t in threads + sockets:
            t.start()
        for t in threads:
            t.join(timeout=600)
        stop.set()
        for t in sockets:
            t.join(timeout=120)
        wall = time.time() - start
        if any(t.is_alive() for t in threads + sockets):
            failures.append("a client did not finish within its time")

        # Still answering afterwards: the page, the info, a render.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for method, path, body in [("GET", "/", None), ("GET", "/api/info", None),
                                   ("POST", "/api/render", json.dumps({"workload": "fractal", "args": ["julia", "--size", "64x48"]}))]:
            conn.request(method, path, body=body)
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                failures.append(f"after the load: {method} {path} answered {r.status}")
        rss = status_mib(server.pid, "VmHWM")
        workers_rss = workers_mib(server.pid, "VmHWM")
        if rss > a.max_rss_mib:
            failures.append(f"peak memory {rss:.0f} MiB is over the bound of {a.max_rss_mib:.0f} MiB")
        latencies.sort()
        p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else 0
        print(f"{sum(counts.values())} answers in {wall:.1f} s: " + ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()))
              + f"; latency median {p(0.5):.0f} ms, p95 {p(0.95):.0f} ms; websocket frames {ws_frames[0]}; peak RSS {rss:.0f} MiB"
              + f" (its device workers {workers_rss:.0f} MiB more)")
        if sum(counts.values()) != a.requests:
            failures.append(f"{a.requests - sum(counts.values())} requests got no answer")
        failures += reply_order(port)
        failures += camera_frames(port)
        failures += slow_readers(port, server.pid)
        failures += full_queue(port, server.pid)
        failures += connection_bounds(a.glint, a.device)
        # A page left open with a live view must not keep the server from stopping: SIGTERM
        # closes its connection (a browser answers the close, as this client does) at once.
        live = WebSocket(port)
        live.send(json.dumps({"type": "pulse", "id": 1, "args": ["--size", "64x64"]}))
        live.recv()

        def answer_close():
            try:
                while True:
                    live.recv()
            except (OSError, EOFError):
                live.close()
        threading.Thread(target=answer_close, daemon=True).start()
        stopping = time.time()
        server.terminate()
        try:
            server.wait(timeout=5)
            print(f"stopped {time.time() - stopping:.2f} s after SIGTERM with a live view open")
        except subprocess.TimeoutExpired:
            failures.append("glint serve did not stop within 5 s of SIGTERM while a page had a live view open")
    finally:
        if problem := stop_server(server):
            failures.append(problem)
    report(failures)


if __name__ == "__main__":
    main()
