#!/usr/bin/env python3
"""A 4K Mandelbrot to PNG, whole process, against a plain C loop in the same run.

Builds scripts/bench/peers/mandelbrot.c (gcc -O3 -march=native -fopenmp, or --march: float, one thread per core,
no interior test, counts kept in memory, no image file) and times, alternating, the C program
and `glint fractal mandelbrot --size WxH -o F.png` on each device asked for (whole processes,
start-up, device set-up, colouring and PNG writing included). Prints each median, its ratio
to the C loop's and the PNG's size.

Run: scripts/bench/bench-fractal-peer.py [--glint .build/release/glint] [--size 3840x2160]
         [--runs 7] [--device auto --device cpu --device opencl] [--png-compression auto]
         [--march native]
Measure on a quiet machine (uptime's load well under the core count).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glint", default=".build/release/glint")
    ap.add_argument("--size", default="3840x2160")
    ap.add_argument("--iterations", type=int, default=128)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--device", action="append", help="glint devices to time (default: auto, cpu, opencl)")
    ap.add_argument("--png-compression", default="auto", choices=["auto", "fast", "default"])
    ap.add_argument("--march", default="native",
                    help="gcc's -march for the C loop (haswell: AVX2 code on a machine with AVX-512)")
    args = ap.parse_args()
    if not re.fullmatch(r"[a-z0-9][a-z0-9.+_-]{0,40}", args.march):
        sys.exit(f"--march {args.march!r}: not a processor name gcc takes (e.g. native, haswell, znver3)")
    if not 1 <= args.runs <= 100:
        sys.exit("--runs must be between 1 and 100")
    devices = args.device or ["auto", "cpu", "opencl"]
    width, height = args.size.lower().split("x")
    if shutil.which("gcc") is None:
        sys.exit("gcc is needed to build the C loop")
    with tempfile.TemporaryDirectory() as tmp:
        peer = os.path.join(tmp, "mandelbrot")
        subprocess.run(["gcc", "-O3", f"-march={args.march}", "-fopenmp", os.path.join(HERE, "peers", "mandelbrot.c"), "-o", peer],
                       check=True)
        png = os.path.join(tmp, "m.png")
        jobs = {"C loop (OpenMP, no PNG)": [peer, width, height, str(args.iterations)]}
        for d in devices:
            jobs[f"glint --device {d}"] = [args.glint, "fractal", "mandelbrot", "--size", args.size,
                                          "--iterations", str(args.iterations), "--device", d, "-q",
                                          "--png-compression", args.png_compression, "-o", png]
        for cmd in jobs.values():  # warm-up: caches (OpenCL programs, page cache)
            timed(cmd)
        times = {name: [] for name in jobs}
        for _ in range(args.runs):  # alternating, so drifts in the machine's load hit all alike
            for name, cmd in jobs.items():
                times[name].append(timed(cmd))
        size = os.path.getsize(png)
        peer_median = statistics.median(times["C loop (OpenMP, no PNG)"])
        print(f"{args.size}, {args.iterations} iterations, medians of {args.runs} whole-process runs "
              f"(PNG {size / 1e6:.2f} MB, --png-compression {args.png_compression}; C loop -march={args.march}):")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"  {name:28s} {m * 1000:8.1f} ms   {peer_median / m:5.2f}x the C loop")


if __name__ == "__main__":
    main()
