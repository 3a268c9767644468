#!/usr/bin/env python3
"""Latency of each view of `glint serve`, as a page sees it: time from sending a view over the
WebSocket to its first (preview or first pass) and final frame, medians of several views, and
the live views' frame rates. Prints a Markdown table.

Usage: scripts/bench/serve-latency.py [--glint .build/release/glint] [--device opencl] [--runs 7]
"""
import argparse, json, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ci"))
from serve_ws import WebSocket  # noqa: E402  (scripts/ci/serve_ws.py)


def view(ws, vid, message):
    """Sends a view; (ms to the first frame, ms to the final frame, the final frame's JSON)."""
    message = dict(message, id=vid)
    t0 = time.perf_counter()
    ws.send(json.dumps(message))
    first = final = None
    meta = None
    while True:
        m = ws.recv()
        if isinstance(m, bytes):
            continue
        doc = json.loads(m)
        if doc.get("id") != vid:
            continue
        if doc["type"] == "error":
            sys.exit(f"view failed: {doc['error']}")
        if doc["type"] == "frame":
            now = (time.perf_counter() - t0) * 1000
            first = first if first is not None else now
            if doc["stage"] == "final":
                final, meta = now, doc
        if doc["type"] == "done":
            return first, final, meta


def live(ws, vid, message, seconds):
    ws.send(json.dumps(dict(message, id=vid)))
    t0, frames, last = time.perf_counter(), 0, None
    while time.perf_counter() - t0 < seconds:
        m = ws.recv()
        if isinstance(m, bytes):
            frames += 1
        else:
            doc = json.loads(m)
            if doc.get("type") == "error":
                sys.exit(f"live view failed: {doc['error']}")
            last = doc
    ws.send(json.dumps({"type": "stop"}))
    return frames / (time.perf_counter() - t0), last


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--glint", default=".build/release/glint")
    ap.add_argument("--device", default="opencl")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    server = subprocess.Popen([a.glint, "serve", "--port", "0", "--device", a.device], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split("http://127.0.0.1:")[1].split("/")[0])
        ws = WebSocket(port)
        rows = []
        k = 0

        def measure(name, message, vary):
            nonlocal k
            firsts, finals, meta = [], [], None
            for r in range(a.runs + 1):
                k += 1
                f, g, meta = view(ws, k, vary(message, r))
                if r:  # the first view builds the device's programs: not counted
                    firsts.append(f)
                    finals.append(g)
            rows.append((name, statistics.median(firsts), statistics.median(finals), meta))

        def pan(message, r):
            m = json.loads(json.dumps(message))
            args = m["args"]
            i = args.index("--center")
            x, y = args[i + 1].split(",")
            args[i + 1] = f"{float(x) + 0.001 * r:.6f},{y}"
            return m

        frac = {"type": "render", "workload": "fractal", "preview": True,
                "args": ["mandelbrot", "--size", "1280x720", "--center", "-0.75,0.1", "--zoom", "1"]}
        measure("fractal 1280×720, zoom 1, 128 iterations (preview, then full size)", frac, pan)
        noprev = dict(frac, preview=False)
        measure("fractal 1280×720, zoom 1, no preview", noprev, pan)
        deep = {"type": "render", "workload": "fractal", "preview": True,
                "args": ["mandelbrot", "--size", "1280x720", "--center",
                         "-0.743643887037158704752191506114774,0.131825904205311970493132056385139",
                         "--zoom", "1e30", "--iterations", "4000", "--smooth"]}
        measure("fractal 1280×720, zoom 1e30, 4000 iterations, smooth (perturbation)", deep, lambda m, r: m)
        rt = {"type": "render", "workload": "rtow", "args": ["--scene", "cover", "--size", "640x360", "--spp", "16"]}
        measure("rtow cover 640×360, 16 spp (first pass, then all)", rt,
                lambda m, r: dict(m, args=m["args"] + ["--orbit", f"{r},0"]))
        iso = {"type": "render", "workload": "iso", "args": ["upload:last", "--depth", "20"]}
        measure("iso of the last view (the 640×360 ray-traced picture, depth 20)", iso, lambda m, r: m)
        k += 1
        view(ws, k, {"type": "render", "workload": "fractal", "args": ["mandelbrot", "--size", "1280x720"]})
        k += 1
        mist_fps, mist_meta = live(ws, k, {"type": "mist", "source": "render", "args": []}, 6)
        k += 1
        pulse_fps, _ = live(ws, k, {"type": "pulse", "args": ["--size", "1280x720"]}, 4)
        ws.close()
        print(f"device: {rows[0][3]['device']}; medians of {a.runs} views after one to warm up\n")
        print("| view | first frame | final frame | server's render (wall) |\n|---|---|---|---|")
        for name, f, g, meta in rows:
            print(f"| {name} | {f:.0f} ms | {g:.0f} ms | {meta['wall_ms']:.0f} ms |")
        print(f"| misty window, live, 1280×720 (the last view) | {mist_fps:.1f} frames/s delivered | | {mist_meta['wall_ms']:.0f} ms a frame |")
        print(f"| pulse, live, 1280×720 | {pulse_fps:.1f} frames/s delivered (paced at 30) | | |")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
