#!/usr/bin/env python3
"""Glint's blur against OpenCV's cv2.GaussianBlur, on the same images, in one run.

Speed: OpenCV (cv2.setNumThreads(--threads)) and `glint blur --repeat-runs N` (everything reused
between runs, median reported) on the same 8-bit RGBA picture, for each sigma and each Glint
backend and method; prints both medians and the speed-up of Glint over OpenCV.

Agreement: Glint's exact method against cv2.GaussianBlur(img, (0, 0), sigma) (BORDER_REFLECT_101)
on the same picture for a few sigmas and both backends: the largest difference in levels and how
many channel values differ at all. The recursive method's distance from cv2 is shown too (it is an
approximation; docs/BLUR-MIST.md documents its error).

Set up OpenCV once:  apt-get install python3-opencv   (Debian's OpenCV, for /usr/bin/python3)
Run:                 /usr/bin/python3 scripts/bench/bench-opencv.py [--glint .build/release/glint]
(Or a venv with opencv-python-headless from PyPI, run with the venv's python.)

Measure on a quiet machine (uptime's load well under the core count): both sides share the cores.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np


def picture(width, height, seed=1):
    """Gradients, a sine pattern, hard-edged squares with noise; opaque RGBA."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    img = np.zeros((height, width, 4), np.uint8)
    img[..., 0] = (x * 255 // max(width - 1, 1)).astype(np.uint8)
    img[..., 1] = ((np.sin(x / 9.0) * np.cos(y / 7.0) * 0.5 + 0.5) * 255).astype(np.uint8)
    squares = ((x // 24 + y // 24) % 2) == 0
    img[..., 2] = np.where(squares, rng.integers(0, 256, (height, width)), 40).astype(np.uint8)
    img[..., 3] = 255
    return img


def time_opencv(img, sigma, runs):
    cv2.GaussianBlur(img, (0, 0), sigma)  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        cv2.GaussianBlur(img, (0, 0), sigma)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def glint_blur(glint, path, out, sigma, method, device, runs=None):
    cmd = [glint, "blur", path, "-o", out, "--sigma", str(sigma), "--method", method, "--device", device]
    if runs:
        cmd += ["--repeat-runs", str(runs)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"glint failed: {' '.join(cmd)}\n{p.stderr}")
    m = re.search(r"repeated: median ([0-9.]+) ms", p.stdout)
    k = re.search(r"repeated: .*kernels ([0-9.]+) ms", p.stdout)
    return (float(m.group(1)) if m else None), (float(k.group(1)) if k else None)


def read_rgba(path):
    bgr = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    return cv2.cvtColor(bgr, cv2.COLOR_BGRA2RGBA if bgr.shape[2] == 4 else cv2.COLOR_BGR2RGBA)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glint", default=".build/release/glint", help="the glint binary (a release build)")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--sigmas", default="2,10,20,40")
    ap.add_argument("--threads", type=int, default=2, help="OpenCV threads (GLINT_THREADS is left as it is)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--devices", default="cpu,opencl")
    ap.add_argument("--check-sigmas", default="0.8,2,3.3,5,10,20")
    args = ap.parse_args()

    w, h = map(int, args.size.lower().split("x"))
    cv2.setNumThreads(args.threads)
    img = picture(w, h)
    tmp = tempfile.mkdtemp(prefix="glint-vs-opencv-")
    path = os.path.join(tmp, "in.png")
    cv2.imwrite(path, cv2.cvtColor(img, cv2.COLOR_RGBA2BGRA))
    out = os.path.join(tmp, "out.png")
    print(f"OpenCV {cv2.__version__}, {args.threads} threads; glint {args.glint}; {w}x{h} RGBA 8-bit; "
          f"load {os.getloadavg()[0]:.2f}; median of {args.runs} runs")

    print("\nspeed (ms, median; wall time; on a GPU the OpenCL wall includes the transfers, a CPU device has none)")
    print(f"{'sigma':>5}  {'OpenCV':>8}  {'device':<7} {'method':<10} {'Glint':>8}  {'kernels':>8}  {'speed-up':>8}")
    for s in [float(v) for v in args.sigmas.split(",")]:
        cv_ms = time_opencv(img, s, args.runs)
        for device in args.devices.split(","):
            for method in ["auto", "exact", "recursive"]:
                if method == "exact" and s > 20:
                    continue
                g, k = glint_blur(args.glint, path, out, s, method, device, args.runs)
                print(f"{s:>5g}  {cv_ms:>8.2f}  {device:<7} {method:<10} {g:>8.2f}  {('%.2f' % k) if k else '-':>8}  {cv_ms / g:>7.1f}x")

    print("\nagreement with cv2.GaussianBlur(img, (0,0), sigma), BORDER_REFLECT_101 (levels)")
    print(f"{'sigma':>5}  {'ksize':>5}  {'device':<7} {'method':<10} {'max':>4}  {'differing values':>17}  {'mean':>7}")
    worst = 0
    for s in [float(v) for v in args.check_sigmas.split(",")]:
        ref = cv2.GaussianBlur(img, (0, 0), s).astype(int)
        ksize = int(round(s * 6 + 1)) | 1
        for device in args.devices.split(","):
            for method in ["exact", "recursive"]:
                glint_blur(args.glint, path, out, s, method, device)
                got = read_rgba(out).astype(int)
                d = np.abs(got - ref)
                if method == "exact":
                    worst = max(worst, int(d.max()))
                print(f"{s:>5g}  {ksize:>5}  {device:<7} {method:<10} {int(d.max()):>4}  {int((d > 0).sum()):>9} of {d.size:<7}  {d.mean():>7.4f}")
    print(f"\nexact method vs cv2: largest difference {worst} level{'s' if worst != 1 else ''} "
          f"({'within' if worst <= 1 else 'OUTSIDE'} the 1-level contract)")
    return 0 if worst <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
