#!/usr/bin/env python3
"""Fuzz `glint serve`: mutated HTTP requests and WebSocket frames against a running server.

  scripts/ci/fuzz-serve.py [--glint PATH] [--cases N] [--seed S] [--keep DIR] [--max-rss-mib M]

Each case starts from a valid request (a render, an upload, a location, a locate, a zoom video,
the info page, a WebSocket view) and mutates it: its bytes, its headers (duplicated, absurd or
contradictory lengths, chunked bodies cut short, long or binary lines), its JSON (wrong types,
huge numbers, deep nesting, stray Unicode) or, over a WebSocket, its frames (unknown opcodes,
continuations without a start, invalid UTF-8, oversized control frames, lengths past the data).

A case passes when the server stays up and within memory, and anything it answers is HTTP whose
API errors are one line of JSON with "error" and "status". Every 25 cases, and at the end, the
server must still answer /api/info with a 200 within 5 s; SIGTERM must end it with status 0 and
its temporary folder gone. Failing cases are written to --keep (default ./fuzz-serve-failures)
with the bytes sent and what came back; the run is repeatable with the same --seed.
"""
import argparse, base64, copy, json, os, random, socket, struct, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_ws import png, report, status_mib, stop_server  # noqa: E402

API_STATUSES = {200, 204, 400, 401, 403, 404, 405, 413, 421, 431, 499, 500, 501, 503, 504, 505}


def valid_requests(port):
    """(name, method, path, headers, body) of requests the server accepts."""
    host = f"127.0.0.1:{port}"
    def job(workload, args, **extra):
        return json.dumps({"workload": workload, "args": args, **extra}).encode()
    small = ["--size", "16x12"]
    return [
        ("render", "POST", "/api/render", {"Host": host, "Content-Type": "application/json"},
         job("fractal", ["mandelbrot", "--center", "-0.75,0.1", "--zoom", "3", "--iterations", "64"] + small)),
        ("render-rtow", "POST", "/api/render", {"Host": host}, job("rtow", ["--scene", "ch8", "--spp", "1"] + small)),
        ("render-pulse", "POST", "/api/render", {"Host": host}, job("pulse", ["--hue", "0.3"] + small)),
        ("location", "POST", "/api/location", {"Host": host}, job("fractal", ["mandelbrot", "--zoom", "1e20", "--iterations", "100"])),
        ("locate", "POST", "/api/locate", {"Host": host},
         job("fractal", ["mandelbrot", "--center", "-1.75,0", "--zoom", "10"], feature="minibrot")),
        ("compare", "POST", "/api/compare", {"Host": host}, job("fractal", ["mandelbrot"] + small, a="cpu", b="cpu")),
        ("upload", "POST", "/api/upload", {"Host": host, "Content-Type": "image/png"}, png(8, 6)),
        ("zoomvideo", "POST", "/api/zoomvideo", {"Host": host},
         json.dumps({"args": ["mandelbrot", "--zoom", "1e3", "--iterations", "64"], "size": "16x8", "seconds": 1,
                     "fps": 2, "columns": 16}).encode()),
        ("info", "GET", "/api/info", {"Host": host}, b""),
        ("page", "GET", "/", {"Host": host}, b""),
    ]


def encode_request(method, path, headers, body, chunked=False):
    lines = [f"{method} {path} HTTP/1.1"]
    for k, v in headers.items():
        lines.append(f"{k}: {v}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        payload = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    else:
        if "Content-Length" not in headers and (body or method == "POST"):
            lines.append(f"Content-Length: {len(body)}")
        payload = body
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + payload


def mutate_json(rng, body):
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    weird = [None, True, -1, 0, 2 ** 63, -2 ** 64, 1e308, "", "\u0000", "\ud7ff\ue000", "é" * 5000, [], {}, [[[[[]]]]],
             "1e999999", "NaN", "-0", "0x10", " 100000", "upload:ffffffffffffffff", "upload:last", "../../etc/passwd"]
    for _ in range(rng.randint(1, 3)):
        if not isinstance(doc, dict):
            break
        choice = rng.random()
        if choice < 0.3 and isinstance(doc.get("args"), list) and doc["args"]:
            i = rng.randrange(len(doc["args"]))
            doc["args"][i] = copy.deepcopy(rng.choice(weird + ["--size", "--zoom", "--iterations", "--frames", "99999999999", "-o"]))
        elif choice < 0.5 and isinstance(doc.get("args"), list):
            doc["args"].insert(rng.randrange(len(doc["args"]) + 1), rng.choice(["--size", "100000x100000", "--ss", "16",
                                                                                  "--iterations", "16777216", "--zoom",
                                                                                  "1e999999", "--location", "--help"]))
        elif choice < 0.7:
            key = rng.choice(list(doc.keys()) + ["device", "a", "b", "preview", "feature", "size", "seconds", "columns"])
            doc[key] = copy.deepcopy(rng.choice(weird))
        elif choice < 0.8:
            doc = copy.deepcopy(rng.choice(weird))
        else:
            nest = rng.randint(50, 5000)
            return b"[" * nest + b"]" * nest
    return json.dumps(doc).encode()


def mutate_bytes(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not data:
            break
        op = rng.random()
        i = rng.randrange(len(data))
        if op < 0.4:
            data[i] = rng.randrange(256)
        elif op < 0.6:
            del data[i:i + rng.randint(1, 64)]
        elif op < 0.8:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        else:
            data = data[:i]
    return bytes(data)


def http_case(rng, port, requests):
    name, method, path, headers, body = rng.choice(requests)
    headers = dict(headers)
    kind = rng.choice(["json", "bytes", "headers", "chunked", "length", "raw"])
    chunked = False
    if kind == "json":
        body = mutate_json(rng, body)
    elif kind == "bytes":
        body = mutate_bytes(rng, body)
    elif kind == "headers":
        extra = rng.choice([("Content-Length", "-1"), ("Content-Length", "99999999999999999999"),
                            ("Content-Length", "5, 6"), ("Host", "evil.example"), ("Origin", "http://evil.example"),
                            ("X-Long", "a" * rng.choice([100, 10000, 100000])), ("Expect", "100-continue"),
                            ("Transfer-Encoding", "gzip, chunked"), ("Content-Type", "\x00\x01"),
                            ("Upgrade", "websocket"), ("Cookie", "glint_token=" + "x" * 5000)])
        headers[extra[0]] = extra[1]
        if rng.random() < 0.3:
            path = rng.choice([path + "?" + "a=" * 3000, "/" + "x" * 9000, path + "%00", "/static/../../etc/passwd",
                               "*", "http://evil.example/api/info"])
        if rng.random() < 0.3:
            method = rng.choice(["PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW", "G\x00ET", "GET" * 100])
    elif kind == "chunked":
        chunked = True
    elif kind == "length":
        headers["Content-Length"] = str(max(0, len(body) + rng.choice([-5, -1, 1, 1000])))
    wire = encode_request(method, path, headers, body, chunked)
    if kind == "raw":
        wire = mutate_bytes(rng, wire)
    if kind == "chunked" and rng.random() < 0.5:
        wire = wire[:rng.randrange(len(wire))]
    return f"http {name} {kind}", wire


def ws_frame(opcode, payload, fin=True, masked=True, length=None):
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | opcode])
    m = 0x80 if masked else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 65536:
        head += bytes([m | 126]) + struct.pack(">H", n)
    else:
        head += bytes([m | 127]) + struct.pack(">Q", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_case(rng, port):
    key = base64.b64encode(os.urandom(16)).decode()
    upgrade = (f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode()
    messages = [{"type": "render", "id": 1, "workload": "fractal", "args": ["mandelbrot", "--size", "16x12"], "preview": True},
                {"type": "mist", "id": 2, "source": "render", "size": "16x12"},
                {"type": "pulse", "id": 3, "args": ["--size", "16x16"]},
                {"type": "wipe", "points": [[0.1, 0.2], [0.3, 0.4]], "radius": 0.1},
                {"type": "stop"}, {"type": "rtow", "id": 4, "args": ["--size", "16x12", "--spp", "1"]}]
    frames = b""
    for _ in range(rng.randint(1, 4)):
        text = mutate_json(rng, json.dumps(rng.choice(messages)).encode())
        op = rng.random()
        if op < 0.5:
            frames += ws_frame(1, text)
        elif op < 0.6:
            frames += ws_frame(1, b"\xff\xfe" + text)  # invalid UTF-8
        elif op < 0.7:
            frames += ws_frame(0, text)  # a continuation that continues nothing
        elif op < 0.8:
            frames += ws_frame(rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), text)
        elif op < 0.85:
            frames += ws_frame(9, os.urandom(200))  # a ping over 125 bytes
        elif op < 0.9:
            frames += ws_frame(2, os.urandom(rng.randint(0, 5000)))  # a camera frame of any size
        elif op < 0.95:
            frames += ws_frame(1, text, masked=False)
        else:
            frames += ws_frame(1, text, length=len(text) + rng.randint(1, 1 << 20))
    return "websocket", upgrade + frames


def exchange(port, wire, timeout=4.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    got = b""
    try:
        s.sendall(wire)
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        deadline = time.time() + timeout
        while time.time() < deadline and len(got) < (1 << 22):
            part = s.recv(65536)
            if not part:
                break
            got += part
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        pass
    finally:
        s.close()
    return got


def check_http(got):
    """Why an HTTP answer breaks a promise, or None."""
    if not got:
        return None  # the server may close a connection it cannot read
    head, _, body = got.partition(b"\r\n\r\n")
    first = head.split(b"\r\n")[0].decode("latin-1")
    parts = first.split(" ")
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        return f"not an HTTP answer: {first[:80]!r}"
    status = int(parts[1])
    if status not in API_STATUSES:
        return f"unexpected status {status}"
    headers = head.decode("latin-1").lower()
    # Only this answer's body: a mutated request may have read as two, answered one after the other.
    for h in headers.split("\r\n"):
        if h.startswith("content-length:") and h.split(":", 1)[1].strip().isdigit():
            body = body[:int(h.split(":", 1)[1])]
    if status >= 400 and "application/json" in headers and b"chunked" not in head.lower():
        text = body.decode("utf-8", "replace").strip()
        try:
            doc = json.loads(text)
        except ValueError:
            return f"a {status} whose JSON does not parse: {text[:120]!r}"
        if not isinstance(doc, dict) or "\n" in doc.get("error", "\n") or doc.get("status") != status:
            return f"a {status} that is not one line of error JSON: {text[:120]!r}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--glint", default=os.environ.get("GLINT", ".build/debug/glint"))
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--keep", default="./fuzz-serve-failures")
    ap.add_argument("--max-rss-mib", type=float, default=768.0)
    ap.add_argument("--show", action="append", default=[], help="print every answer of this status (repeatable)")
    a = ap.parse_args()
    if not 1 <= a.cases <= 1000000:
        sys.exit("--cases must be 1..1000000")
    rng = random.Random(a.seed)
    server = subprocess.Popen([a.glint, "serve", "--port", "0", "--device", "cpu", "--max-renders", "2", "--queue", "4",
                               "--render-timeout", "10", "--max-pixels", "200000", "--max-body", "1048576"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    failures, counts, statuses, peak = [], {}, {}, 0.0
    line = server.stdout.readline()
    if "http://127.0.0.1:" not in line:
        sys.exit(f"FAIL: glint serve printed no address: {line!r}")
    port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    # The server works in its temporary folder.
    folder = os.readlink(f"/proc/{server.pid}/cwd")
    if "glint-serve-" not in folder:
        sys.exit(f"FAIL: glint serve (pid {server.pid}) is not in a temporary folder of its own: {folder}")
    requests = valid_requests(port)
    print(f"fuzz-serve: {a.cases} cases, seed {a.seed}, server pid {server.pid} port {port}")
    start = time.time()

    def keep(n, what, wire, got, why):
        os.makedirs(a.keep, exist_ok=True)
        with open(os.path.join(a.keep, f"case-{a.seed}-{n}.bin"), "wb") as f:
            f.write(wire)
        with open(os.path.join(a.keep, f"case-{a.seed}-{n}.txt"), "w") as f:
            f.write(f"{what}: {why}\n\n{got[:4000].decode('latin-1')}\n")
        failures.append(f"case {n} ({what}): {why}")

    def healthy():
        t = time.time()
        got = exchange(port, encode_request("GET", "/api/info", {"Host": f"127.0.0.1:{port}"}, b""), timeout=5)
        return got.startswith(b"HTTP/1.1 200"), time.time() - t

    for n in range(a.cases):
        what, wire = ws_case(rng, port) if rng.random() < 0.3 else http_case(rng, port, requests)
        got = exchange(port, wire)
        counts[what.split()[0]] = counts.get(what.split()[0], 0) + 1
        first = got.split(b"\r\n", 1)[0].split(b" ")
        answer = first[1].decode("latin-1") if len(first) > 1 and got.startswith(b"HTTP/") else "none"
        statuses[answer] = statuses.get(answer, 0) + 1
        if answer in a.show:
            print(f"case {n} ({what}): {got[:600]!r}")
        why = None if what == "websocket" else check_http(got)
        if server.poll() is not None:
            why = f"the server ended (status {server.returncode})"
        if why:
            keep(n, what, wire, got, why)
            if server.poll() is not None:
                break
        peak = max(peak, status_mib(server.pid, "VmRSS"))
        if n % 25 == 24:
            ok, took = healthy()
            if not ok:
                keep(n, what, wire, got, f"/api/info did not answer 200 within 5 s after this case ({took:.1f} s)")
    if server.poll() is None:
        ok, took = healthy()
        if not ok:
            failures.append("/api/info did not answer 200 at the end")
    if peak > a.max_rss_mib:
        failures.append(f"resident memory reached {peak:.0f} MiB, over {a.max_rss_mib:.0f}")
    if server.poll() is None and (problem := stop_server(server)):
        failures.append(problem)
    if folder and os.path.exists(folder):
        failures.append(f"the server's temporary folder {folder} is still there")
    print(f"fuzz-serve: {sum(counts.values())} cases ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}) "
          f"in {time.time() - start:.0f} s; answers {', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))}; "
          f"peak RSS {peak:.0f} MiB")
    report(failures)


if __name__ == "__main__":
    main()
