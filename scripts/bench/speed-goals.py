#!/usr/bin/env python3
"""Glint's speed goals on this machine, each measured against its peer in the same run.

One command for the whole check: it names the machine (processor, AVX2 / AVX-512, cores, the
OpenCL devices) and the Glint build (`glint --version`), then measures, with `--device auto`
(what a user who changes nothing gets):

  goal                                   measured with                       peer, same run
  mist 1920x1080 >= 60 frames/s          glint bench mist (standard case)    (the goal itself)
  blur 8-bit 1080p sigma 2 >= 1.0x       glint blur --repeat-runs 100        cv2.GaussianBlur, a thread per core
  blur 8-bit 1080p sigma 20 >= 10x       the same                            the same
  rtow cover >= 20x the book's C++       scripts/bench/rtow-peer.sh          the book's InOneWeekend, 1 thread
  4K Mandelbrot to PNG >= 4x a C loop    scripts/bench/bench-fractal-peer.py scripts/bench/peers/mandelbrot.c (OpenMP)
  iso, 3840x2160 source >= 100 MP/s      glint bench iso --full              (the goal itself)

and prints a table (goal, measured, peer, ratio, met), with --json and --markdown copies. Rounds
alternate Glint and its peer, so that a drift in the machine's load hits both; every figure is a
median over the rounds (--rounds for each goal, but at least 5 for the fractal and at most 3 for
rtow, whose book runs take seconds each). OpenCV gets as many threads as the machine has cores, as
Glint uses.

Peers that are not part of Glint:
  OpenCV:  apt-get install python3-opencv, then run this with /usr/bin/python3 (without it the
           blur goals are reported as not measured);
  the book's C++ sources: --book DIR, a folder with InOneWeekend's main.cc and headers (without
           it the rtow goal is reported as not measured).

--avx2-code, on a machine with AVX-512, runs everything as AVX2 code, the closest this machine
comes to one without AVX-512: PoCL compiles for haswell (POCL_LLVM_CPU_NAME), OpenCV's AVX-512
dispatch is turned off (OPENCV_CPU_DISABLE), the C loop and the book are built with
-march=haswell; the Swift path is AVX2 code everywhere. The processor's cores and clocks stay
what they are: its figures are not another machine's.

Run:  /usr/bin/python3 scripts/bench/speed-goals.py [--glint .build/release/glint] [--book DIR]
          [--rounds 5] [--avx2-code] [--json goals.json] [--markdown goals.md]
Takes about a minute and a half on two cores with the default five rounds (more with --book). Measure on a quiet machine (uptime's load well under the
core count): Glint and its peers share the cores.
"""
import argparse
import importlib.util
import json
import os
import platform
import shutil
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# OpenCV's names for the AVX-512 features its run-time dispatch tests (turned off by --avx2-code).
AVX512_FEATURES = "AVX512F,AVX512-SKX,AVX512-COMMON,AVX512CD,AVX512BW,AVX512DQ,AVX512VL,AVX512-CNL,AVX512-CLX,AVX512-ICL"


def fail(message):
    print(f"speed-goals: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} failed ({r.returncode}): {(r.stderr or r.stdout).strip()[-400:]}")
    return r.stdout + r.stderr


def cpu_info():
    """The processor's model name and feature flags, from /proc/cpuinfo's first processor."""
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "unknown":
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return model, flags


def machine(glint):
    model, flags = cpu_info()
    devices = [line.split(None, 1)[1].strip() for line in run([glint, "devices"]).splitlines()
               if re.match(r"opencl:\d+\s", line)]
    vector = "AVX-512" if "avx512f" in flags else ("AVX2 + FMA, no AVX-512" if "avx2" in flags else "no AVX2")
    return {"processor": model, "vector": vector, "cores": os.cpu_count(), "system": f"{platform.system()} {platform.machine()}",
            "opencl_devices": devices, "glint": run([glint, "--version"]).strip()}


def bench_case(glint, workload, suite, case, unit_case, rounds):
    """Median over rounds of one bench case's throughput (device auto)."""
    values = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b.json")
        for _ in range(rounds):
            run([glint, "bench", workload, suite, "--case", case, "--device", "auto", "--json", out])
            with open(out) as f:
                cases = json.load(f)["cases"]
            hit = [c for c in cases if c["id"] == unit_case]
            if not hit:
                fail(f"bench gave no result for {unit_case}")
            if not hit[0].get("throughput"):
                fail(f"bench case {unit_case}: {hit[0].get('status')} ({hit[0].get('skip_reason') or 'no throughput'})")
            values.append(hit[0]["throughput"]["value"])
            unit, backend = hit[0]["throughput"]["unit"], hit[0]["device"]
    return statistics.median(values), unit, backend, values


def blur_goals(glint, rounds):
    try:
        import cv2  # noqa: F401
    except ImportError:
        return None, "OpenCV's Python module is missing (apt-get install python3-opencv; run with /usr/bin/python3)"
    spec = importlib.util.spec_from_file_location("bench_opencv", os.path.join(HERE, "bench-opencv.py"))
    bo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bo)
    import cv2
    cv2.setNumThreads(os.cpu_count() or 1)
    img = bo.picture(1920, 1080)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        path, out = os.path.join(tmp, "in.png"), os.path.join(tmp, "out.png")
        cv2.imwrite(path, cv2.cvtColor(img, cv2.COLOR_RGBA2BGRA))
        for sigma in (2.0, 20.0):
            cv_ms, glint_ms = [], []
            for _ in range(rounds):
                cv_ms.append(bo.time_opencv(img, sigma, 40))
                text = run([glint, "blur", path, "-o", out, "--sigma", str(sigma), "--device", "auto",
                            "--repeat-runs", "100"])
                m = re.search(r"median ([0-9.]+) ms", text)
                if not m:
                    fail(f"glint blur printed no median: {text.strip()[-300:]}")
                glint_ms.append(float(m.group(1)))
            results[sigma] = (statistics.median(glint_ms), statistics.median(cv_ms), cv2.__version__, cv2.getNumThreads())
    return results, None


def fractal_goal(glint, rounds, march):
    if shutil.which("gcc") is None:
        return None
    text = run([sys.executable, os.path.join(HERE, "bench-fractal-peer.py"), "--glint", glint, "--runs", str(rounds),
                "--device", "auto", "--march", march])
    peer = re.search(r"C loop \(OpenMP, no PNG\)\s+([0-9.]+) ms", text)
    ours = re.search(r"glint --device auto\s+([0-9.]+) ms\s+([0-9.]+)x", text)
    if not peer or not ours:
        fail(f"bench-fractal-peer.py printed no result: {text.strip()[-300:]}")
    return float(ours.group(1)), float(peer.group(1))


def rtow_goal(glint, book, rounds, march):
    env = dict(os.environ, GLINT=glint, DEVICE="auto", MARCH=march)
    text = run([os.path.join(HERE, "rtow-peer.sh"), book, "400", "10", "150", str(rounds)], env=env)
    book_rate = re.search(r"book C\+\+ .*: median ([0-9.]+) M samples/s", text)
    ours = re.search(r"glint --device auto .*: median ([0-9.]+) M samples/s", text)
    if not book_rate or not ours:
        fail(f"rtow-peer.sh printed no result: {text.strip()[-300:]}")
    return float(ours.group(1)), float(book_rate.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glint", default=".build/release/glint", help="the glint binary (a release build)")
    ap.add_argument("--book", help="folder with the book's InOneWeekend sources (main.cc and headers)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds per goal (1 to 50)")
    ap.add_argument("--json", help="write the results as JSON to this file")
    ap.add_argument("--markdown", help="write the table as Markdown to this file")
    ap.add_argument("--avx2-code", action="store_true",
                    help="run Glint's OpenCL CPU device and every peer as AVX2 code (on a machine with AVX-512)")
    args = ap.parse_args()
    if not 1 <= args.rounds <= 50:
        fail("--rounds must be between 1 and 50")
    if not (os.path.isfile(args.glint) and os.access(args.glint, os.X_OK)):
        fail(f"no glint binary at {args.glint} (swift build -c release first, or --glint PATH)")
    if args.book and not os.path.isfile(os.path.join(args.book, "main.cc")):
        fail(f"no main.cc in {args.book}")
    for out in (args.json, args.markdown):
        # Checked before the run, not after minutes of measuring.
        if out and not os.access(os.path.dirname(os.path.abspath(out)), os.W_OK):
            fail(f"cannot write {out}: its folder is missing or not writable")

    march = "native"
    if args.avx2_code:
        _, flags = cpu_info()
        if "avx512f" not in flags:
            fail("--avx2-code is for a machine with AVX-512; this one has none, so its runs are "
                 + ("AVX2 code already: leave the option out" if "avx2" in flags else "not AVX2 code either"))
        # Before OpenCV is imported and before any child starts: they read these at start-up.
        os.environ["POCL_LLVM_CPU_NAME"] = "haswell"
        os.environ["OPENCV_CPU_DISABLE"] = AVX512_FEATURES
        march = "haswell"
    started = time.time()
    info = machine(args.glint)
    if args.avx2_code:
        info["vector"] += "; run as AVX2 code (--avx2-code: PoCL for haswell, OpenCV without AVX-512, peers -march=haswell)"
    print(f"machine: {info['processor']}, {info['cores']} cores, {info['vector']}; "
          f"OpenCL: {'; '.join(info['opencl_devices']) or 'none'}; glint {info['glint']}", flush=True)
    goals = []

    def add(goal, measured, peer, ratio, target, note="", rounds=args.rounds):
        met = None if ratio is None else ratio >= target
        goals.append({"goal": goal, "measured": measured, "peer": peer, "ratio": ratio, "target": target,
                      "met": met, "rounds": rounds if ratio is not None else 0, "note": note})
        shown = "not measured" if ratio is None else f"{ratio:.2f} (goal {target:g}): {'met' if met else 'NOT met'}"
        print(f"  {goal}: {measured}; {peer}; {shown}{'; ' + note if note else ''}", flush=True)

    fps, unit, backend, _ = bench_case(args.glint, "mist", "--standard", "frames", "mist/frames-sigma40@1920x1080",
                                       args.rounds)
    add("mist 1920x1080, sigma 40, 50 drops, >= 60 frames/s", f"{fps:.1f} {unit} ({backend})", "the goal: 60 frames/s",
        fps / 60, 1.0)

    blur, why = blur_goals(args.glint, args.rounds)
    for sigma, target in ((2.0, 1.0), (20.0, 10.0)):
        goal = f"blur 8-bit 1920x1080 sigma {sigma:g}, >= {target:g}x OpenCV"
        if blur is None:
            add(goal, "-", "cv2.GaussianBlur", None, target, why)
        else:
            g, cv, version, threads = blur[sigma]
            add(goal, f"{g:.2f} ms (glint blur --repeat-runs 100)",
                f"cv2.GaussianBlur (OpenCV {version}, {threads} threads) {cv:.2f} ms", cv / g, target)

    if args.book:
        rounds = min(args.rounds, 3)
        g, b = rtow_goal(args.glint, args.book, rounds, march)
        add("rtow cover 400x225, depth 50, >= 20x the book's C++", f"{g:.3f} M samples/s (150 spp)",
            f"the book's InOneWeekend, one thread, g++ -O3 -march={march}: {b:.3f} M samples/s (10 spp)", g / b, 20.0,
            rounds=rounds)
    else:
        add("rtow cover 400x225, depth 50, >= 20x the book's C++", "-", "the book's InOneWeekend", None, 20.0,
            "pass --book DIR (its sources are not part of Glint)")

    rounds = max(args.rounds, 5)
    fractal = fractal_goal(args.glint, rounds, march)
    goal = "4K Mandelbrot to PNG, whole process, >= 4x a plain C loop"
    if fractal is None:
        add(goal, "-", "scripts/bench/peers/mandelbrot.c", None, 4.0, "gcc is needed to build the C loop")
    else:
        g, c = fractal
        add(goal, f"{g:.1f} ms (glint fractal, PNG written)",
            f"scripts/bench/peers/mandelbrot.c, OpenMP, float, -march={march}, no PNG: {c:.1f} ms",
            c / g, 4.0, rounds=rounds)

    for shape in ("square", "rounded"):
        # The standard suite's iso cases are the 3840x2160 ones.
        mps, unit, backend, _ = bench_case(args.glint, "iso", "--standard", f"iso-{shape}", f"iso/iso-{shape}@3840x2160",
                                           args.rounds)
        add(f"iso {shape}, 3840x2160 source, depth 20, >= 100 MP/s", f"{mps:.1f} {unit} ({backend})",
            "the goal: 100 MP/s", mps / 100, 1.0)

    header = "| goal | measured | peer, same run | ratio | met |\n|---|---|---|---|---|\n"
    rows = "".join(f"| {g['goal']} | {g['measured']} | {g['peer']} | "
                   f"{'-' if g['ratio'] is None else format(g['ratio'], '.2f')} | "
                   f"{'not measured: ' + g['note'] if g['met'] is None else ('yes' if g['met'] else 'no')} |\n" for g in goals)
    counts = sorted({g["rounds"] for g in goals if g["rounds"]})
    table = (f"Machine: {info['processor']}, {info['cores']} cores, {info['vector']}; OpenCL: "
             f"{'; '.join(info['opencl_devices']) or 'none'}; glint {info['glint']}. Medians of "
             f"{' to '.join(str(n) for n in (counts[:1] + counts[-1:] if len(counts) > 1 else counts))} alternating rounds per goal.\n\n"
             + header + rows)
    print()
    print(table)
    met = [g["met"] for g in goals if g["met"] is not None]
    print(f"{sum(met)} of {len(met)} measured goals met; {len(goals) - len(met)} not measured "
          f"({time.time() - started:.0f} s)")
    # Both files written under temporary names, then renamed: neither appears half-written.
    written = []
    if args.markdown:
        with open(args.markdown + ".tmp", "w") as f:
            f.write(table)
        written.append(args.markdown)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"schema": "glint-speed-goals/1", "machine": info, "date": time.strftime("%Y-%m-%d"),
                       "goals": goals}, f, indent=1)
            f.write("\n")
        written.append(args.json)
    for path in written:
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
