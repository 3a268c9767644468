#!/usr/bin/python3
"""The page of `glint serve` in a real browser (headless Chromium driven by Selenium).

    /usr/bin/python3 scripts/ci/test-browser.py [--glint PATH] [--out DIR] [--only CHECKS] [DEVICE ...]

DEVICE: the server's --device, one server and one browser per device (default: cpu opencl).
--glint: the binary (default: $GLINT, else .build/debug/glint); nothing is built here.
--out: where the screenshots and latencies go (default: $GLINT_BROWSER_OUT, else docs/images/serve).
--only: some of the checks, comma-separated (fractal, files, rtow, keys, resolution, mist, pulse, iso, compare, links,
error_bar).

Per device it starts `glint serve --port 0 --host 127.0.0.1 --token TOKEN --device DEVICE` (a
made-up token: a request without it is refused, which is checked), reads the address it prints
(with `?token=`), opens the page, whose scripts, requests and WebSocket then carry only the
cookie the server set, and, with real mouse and keyboard input (Selenium's ActionChains):
pans (drag) and zooms (wheel) the fractal, moves Julia's c (ctrl-drag, and a click on the
Mandelbrot inset), zooms a view at 1e40; orbits (drag), dollies (wheel) and rolls (shift-drag)
the ray tracer; starts the misty window on the last rendered picture and on an uploaded one,
wipes it (drag) and sets its gravity; runs the pulse and moves its hue; applies iso to the
current view; presses the keys (zoom, pan, the help overlay, views) and walks the settled views
with Back and Forward; runs a CPU-against-OpenCL comparison and looks at it in the compare
viewer (keys flip A, B and the difference; the pixel readout against the PNGs the command line
writes on each device; wheel and + zoom about the pointer, a drag pans, 0 fits); makes a tiny
zoom video of a fractal view and downloads it; saves the fractal's PNG (which must be `glint
fractal -o`'s file, and re-render byte for byte from its own record) and .kfr, opens a .kfr in the
file input, drops the PNG on the view and pastes `--center ... --zoom ...` and a bare centre into
the centre field; renders views of size auto at device pixel ratios 1 and 2 (set through the
DevTools protocol), after a resize and at resolution ½, each frame the canvas's size in screen
pixels, slow views with a half-size pass; opens each view's own link (iso and the mist of a
fractal view, the pulse, a comparison) in a fresh page, which must show the command line's
picture; and checks an error shows in the page's message bar. Every gesture must change the canvas's pixels. Fixed views (a fractal at --zoom
2e4, one at 1e40, a ray-traced view, the iso of a view) must give the PNG the command line
renders for the same arguments on the same device, byte for byte in pixels
(`glint compare --images ... --tolerance exact`).

Written: serve-fractal.png, serve-rtow.png, serve-mist.png, serve-pulse.png, serve-iso.png,
serve-compare.png, serve-resolution.png (screenshots of the last device's run) and serve-latency.json (the page-side
latency of each view per device: from sending the request to the frame's arrival, median of a
few, with the server's wall time beside it).

Needs Debian's chromium, chromium-driver and python3-selenium. Exits 0 when every check passes,
1 with the first failure's message otherwise; the server and the browser are always stopped, and
every wait is bounded.
"""
import argparse
import base64
import importlib.util
import json
import math
import os
import queue
import re
import secrets
import shlex
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver import ActionChains
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

WINDOW = (1400, 960)
SERVER_START_S = 60
RENDER_S = 120
# Seahorse valley, where the default 128 iterations leave a view at 1e9 mostly black.
AUTO_CENTER = ["-0.743643887037158704752191506114774", "0.131825904205311970493132056385139"]
# A fixed view (the zoom goes between --center's pair and --iterations).
FIXED_FRACTAL = ["mandelbrot", "--size", "320x200", "--center", "-0.74364,0.13182", "--zoom",
                 "--iterations", "500", "--palette", "rainbow", "--smooth"]
DEEP_CENTER = ("-0.743643887037158704752191506114774", "0.131825904205311970493132056385139")


class Failure(Exception):
    pass


def log(text):
    print(text, flush=True)


def png_pixels(path):
    """An 8-bit, non-interlaced PNG read apart from any browser, by scripts/tools/png-strip.py's
    reader: (width, height, pixel(x, y) -> [r, g, b, a]). That reader keeps the colours only; the
    server's frames have no alpha, so a is 255."""
    spec = importlib.util.spec_from_file_location("png_strip", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                            "..", "tools", "png-strip.py"))
    reader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reader)
    w, h, rows = reader.read_png(path)
    return w, h, lambda x, y: list(rows[y][3 * x:3 * x + 3]) + [255]


# MARK: The server


class Server:
    """`glint serve` on a free port; its output kept for the failure message."""

    def __init__(self, glint, device):
        self.lines = []
        self.queue = queue.Queue()
        token = secrets.token_hex(16)
        self.proc = subprocess.Popen(
            [glint, "serve", "--port", "0", "--host", "127.0.0.1", "--token", token, "--device", device],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + SERVER_START_S
        self.url = None
        while self.url is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"glint serve printed no address within {SERVER_START_S} s; it said: {self.output()}")
            try:
                line = self.queue.get(timeout=min(left, 1))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise Failure(f"glint serve exited with {self.proc.returncode}: {self.output()}")
                continue
            m = re.search(r"(http://127\.0\.0\.1:\d+/)\?token=" + token, line)
            if m:
                self.url = m.group(0)
                base = m.group(1)
        # Without the token the server answers nothing but its refusal.
        try:
            urllib.request.urlopen(base + "api/info", timeout=30)
            refused = "200"
        except urllib.error.HTTPError as e:
            refused = None if e.code == 401 else str(e.code)
        if refused:
            self.stop()
            raise Failure(f"glint serve --token answered a request without the token with {refused}, not 401")

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            self.queue.put(line)

    def output(self):
        return " | ".join(self.lines[-20:]) or "(nothing)"

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=15)


# MARK: The browser


def start_browser():
    opts = webdriver.ChromeOptions()
    for binary in ("/usr/lib/chromium/chromium", "/usr/bin/chromium"):
        if os.path.exists(binary):
            opts.binary_location = binary
            break
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={WINDOW[0]},{WINDOW[1]}", "--hide-scrollbars", "--force-device-scale-factor=1",
                # A made-up camera (a moving test pattern), and no permission prompt.
                "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


def stop_browser(driver):
    """driver.quit() within 20 s, else the driver process is killed."""
    done = threading.Event()

    def quit_it():
        try:
            driver.quit()
        except Exception:
            pass
        done.set()

    threading.Thread(target=quit_it, daemon=True).start()
    if not done.wait(20):
        try:
            driver.service.process.kill()
        except Exception:
            pass


# MARK: The checks


class PageTest:
    def __init__(self, driver, server, glint, device, work, out, only=None):
        self.only = only
        self.d = driver
        self.server = server
        self.glint = glint
        self.device = device
        self.work = work
        self.out = out
        self.latency = {}
        self.expected_errors = 0
        self.problems = []
        self.version = None

    # Page access

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def g(self, expr):
        return self.js("return window.glint." + expr)

    def wait(self, what, condition, timeout=RENDER_S):
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                errors = self.g("errors") if self.has_hook() else []
                raise Failure(f"{self.device}: timed out after {timeout} s waiting for {what}"
                              + (f"; the page's errors: {errors}" if errors else "")
                              + f"; server: {self.server.output()}")
            time.sleep(0.05)

    def has_hook(self):
        try:
            return bool(self.js("return !!window.glint"))
        except WebDriverException:
            return False

    def check(self, condition, message):
        if not condition:
            raise Failure(f"{self.device}: {message}")

    def el(self, id_):
        return self.d.find_element(By.ID, id_)

    def current(self, view):
        return (self.g("current") or {}).get(view, 0)

    def finished(self, view, after):
        """Waits for a request of `view` newer than `after` to finish; its last frame."""
        def ready():
            err = self.g(f"requestError('{view}')")
            if err and self.current(view) > after:
                raise Failure(f"{self.device}: {view}: the server answered an error: {err}")
            if self.current(view) <= after or not self.g(f"isDone('{view}')"):
                return None
            frame = (self.g("lastFrame") or {}).get(view)
            return frame if frame and frame["id"] == self.current(view) and frame["stage"] == "final" else None
        return self.wait(f"the {view} view's render after request #{after}", ready)

    def canvas(self, view):
        return self.g(f"canvasHash('{view}')")

    def args(self, view):
        return self.g(f"args('{view}')")

    def go(self, view, args):
        """Sets the page's address to a view and waits for it to be rendered."""
        before = self.current(view)
        target = f"{view}=" + urllib.parse.quote(" ".join(args))
        if self.js("return location.hash") == "#" + target:
            self.js("location.hash = arguments[0]", view)   # the same address fires no hashchange
        self.js("location.hash = arguments[0]", target)
        return self.finished(view, before)

    def tab(self, view):
        self.el("tab-" + view).click()
        self.wait(f"the {view} tab", lambda: self.g("activeView") == view, 10)

    def screenshot(self, name):
        time.sleep(0.3)
        self.d.save_screenshot(os.path.join(self.out, name))

    # Gestures: real pointer input

    def drag(self, id_, dx, dy, key=None, steps=6):
        el = self.el(id_)
        chain = ActionChains(self.d)
        if key:
            chain.key_down(key)
        chain.move_to_element(el).click_and_hold()
        for i in range(steps):
            # The moves add up to (dx, dy) exactly.
            chain.move_by_offset(dx * (i + 1) // steps - dx * i // steps, dy * (i + 1) // steps - dy * i // steps).pause(0.03)
        chain.release()
        if key:
            chain.key_up(key)
        chain.perform()

    def pinch(self, id_, spread, steps=6):
        """Two touch pointers on the element's centre moving apart by `spread` CSS pixels each."""
        el = self.el(id_)
        builder = ActionBuilder(self.d)
        fingers = [builder.add_pointer_input(interaction.POINTER_TOUCH, f"finger{k}") for k in (1, 2)]
        for f, sign in zip(fingers, (-1, 1)):
            f.create_pointer_move(duration=0, x=sign * 40, y=0, origin=el)
        for f in fingers:
            f.create_pointer_down(button=0)
        for i in range(1, steps + 1):
            for f, sign in zip(fingers, (-1, 1)):
                f.create_pointer_move(duration=50, x=sign * (40 + spread * i // steps), y=0, origin=el)
        for f in fingers:
            f.create_pointer_up(button=0)
        builder.perform()

    def shifted_match(self, before, after, shift):
        """The share of pixels of `after` (base64 PNG) equal to `before`'s `shift` pixels to their left."""
        return self.d.execute_async_script("""
            const [a, b, shift, done] = arguments;
            const load = async (b64) => {
              const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
              const bitmap = await createImageBitmap(new Blob([bytes], {type: "image/png"}));
              const c = document.createElement("canvas");
              c.width = bitmap.width; c.height = bitmap.height;
              const ctx = c.getContext("2d");
              ctx.drawImage(bitmap, 0, 0);
              return ctx.getImageData(0, 0, c.width, c.height);
            };
            Promise.all([load(a), load(b)]).then(([p, q]) => {
              let same = 0, all = 0;
              for (let y = 0; y < p.height; y++) for (let x = 0; x + shift < p.width; x++) {
                const i = (y * p.width + x) * 4, j = (y * p.width + x + shift) * 4;
                all++;
                if (p.data[i] === q.data[j] && p.data[i + 1] === q.data[j + 1] && p.data[i + 2] === q.data[j + 2]) same++;
              }
              done(all ? same / all : 0);
            }, (e) => done(-1));
        """, before, after, shift)

    def pan_moves_by_whole_pixels(self, label):
        """A drag of a whole number of render pixels moves the picture by exactly that many."""
        view = "fractal"
        css_w = int(self.js("return parseInt(document.getElementById('canvas-fractal').style.width, 10)"))
        width = int(self.js("return document.getElementById('canvas-fractal').width"))
        step = css_w // math.gcd(width, css_w)
        dx = step * max(1, 200 // step)
        if dx > css_w // 2:
            log(f"  fractal: {label}: no whole-pixel drag fits this window ({css_w} CSS pixels for {width}); skipped")
            return
        shift = dx * width // css_w
        before = self.g("lastPNG('fractal')")
        args0 = self.args(view)
        n = self.current(view)
        self.drag("canvas-fractal", dx, 0)
        self.finished(view, n)
        args1 = self.args(view)
        im0 = args0[args0.index("--center") + 1].split(",")[1]
        im1 = args1[args1.index("--center") + 1].split(",")[1]
        self.check(float(im0) == float(im1), f"{label}: a level drag moved the centre's imaginary part: {im0} -> {im1}")
        share = self.shifted_match(before, self.g("lastPNG('fractal')"), shift)
        self.check(share >= 0.98, f"{label}: after a drag of {shift} pixels only {share:.1%} of the picture moved with it")
        log(f"  fractal: {label}: a drag of {dx} CSS pixels moved the picture {shift} pixels ({share:.2%} of pixels equal)")

    def wheel(self, id_, dy):
        ActionChains(self.d).scroll_from_origin(ScrollOrigin.from_element(self.el(id_)), 0, dy).perform()

    # The CLI

    def save_png(self, view, name):
        data = self.g(f"lastPNG('{view}')")
        self.check(data, f"{view}: the page has no PNG")
        path = os.path.join(self.work, name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def cli(self, *args):
        cmd = [self.glint, *args]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            raise Failure(f"{self.device}: timed out: {' '.join(cmd)}")
        if r.returncode != 0:
            raise Failure(f"{self.device}: {' '.join(cmd)} exited {r.returncode}: {(r.stdout + r.stderr).strip()}")
        return r.stdout

    def same_as_cli(self, view, workload, args, name, opaque_frames=False):
        """The page's last PNG of `view` against `glint WORKLOAD ARGS` on the same device: exact.

        `opaque_frames`: the server sends this view's frames without their alpha channel, so
        only the colours are held to exactness (the difference in alpha is recorded)."""
        page = self.save_png(view, f"{name}-page.png")
        cli = os.path.join(self.work, f"{name}-cli.png")
        self.cli(workload, *args, "-o", cli, "--device", self.device, "-q")
        self.same_pictures(view, workload, args, page, cli, opaque_frames)

    def same_pictures(self, view, workload, args, page, cli, opaque_frames=False):
        """The page's PNG file `page` against the command line's `cli`: exact (see same_as_cli)."""
        cmd = [self.glint, "compare", "--images", page, cli, "--tolerance", "exact"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0 and opaque_frames:
            figures = json.loads(subprocess.run(cmd + ["--json", "-"], capture_output=True, text=True, timeout=120).stdout)
            channels = {c["channel"]: c["max_abs"] for c in figures["channels"]}
            if all(channels.get(k) == 0 for k in "RGB") and channels.get("A", 0) > 0:
                note = (f"{workload}: the server's frames drop the alpha channel (glint {workload} writes RGBA): "
                        f"colours equal, alpha differs by up to {channels['A']:.0f}")
                self.problems.append(note)
                log(f"  {view}: NOTE {note}")
                return
        if r.returncode != 0:
            raise Failure(f"{self.device}: {view}: the page's picture differs from `glint {workload} {' '.join(args)}`: "
                          f"{(r.stdout + r.stderr).strip()}")
        log(f"  {view}: the page's PNG equals `glint {workload} {' '.join(args)} --device {self.device}`")

    def latencies(self, view, ids):
        """The page-side latency and the server's wall time of the final frames of `ids`."""
        hist = [h for h in self.g(f"history('{view}')") if h["id"] in ids and h["stage"] == "final"]
        return {
            "final_ms_median": round(statistics.median(h["latencyMs"] for h in hist), 1),
            "final_ms": [h["latencyMs"] for h in hist],
            "server_wall_ms_median": round(statistics.median(h["wallMs"] for h in hist), 1),
        }

    # The views

    def run(self):
        # The page opened without a link: the whole set, its iterations found by the server.
        self.d.get(self.server.url)
        self.wait("the page to connect", lambda: self.has_hook() and self.g("ready"), 30)
        self.wait("the opening fractal frame", lambda: self.g("isDone('fractal')") and (self.g("lastFrame") or {}).get("fractal"), RENDER_S)
        opening = self.args("fractal")
        opens_auto = "--iterations" in opening and opening[opening.index("--iterations") + 1] == "auto"
        self.check(opens_auto, f"the page does not open with --iterations auto: {opening}")
        self.d.get(self.server.url + "#fractal=" + urllib.parse.quote("mandelbrot --size 320x200"))
        self.wait("the page to connect", lambda: self.has_hook() and self.g("ready"), 30)
        info = self.g("info")
        self.version = info.get("version")
        log(f"  page connected: glint {info.get('version')}, server device {info.get('device')}")
        for name in CASES:
            if not self.only or name in self.only:
                getattr(self, name)()
        errors = self.g("errors")
        self.check(len(errors) == self.expected_errors, f"the page reported errors: {errors}")

    def fractal(self):
        view = "fractal"
        self.wait("the first fractal frame", lambda: self.g("isDone('fractal')") and (self.g("lastFrame") or {}).get(view), RENDER_S)
        before = self.canvas(view)
        # Pan: drag right and down.
        args0 = self.args(view)
        n = self.current(view)
        self.drag("canvas-fractal", 90, 45)
        self.finished(view, n)
        args1 = self.args(view)
        self.check("--center" in args1 and args1 != args0, f"a drag did not move the centre: {args0} -> {args1}")
        after_pan = self.canvas(view)
        self.check(after_pan != before, "the fractal canvas did not change after a drag")
        # Zoom: the wheel, up.
        n = self.current(view)
        self.wheel("canvas-fractal", -300)
        self.finished(view, n)
        args2 = self.args(view)
        self.check("--zoom" in args2, f"the wheel did not zoom: {args2}")
        zoom = float(args2[args2.index("--zoom") + 1])
        self.check(zoom > 1, f"wheel up zoomed out: --zoom {zoom}")
        self.check(self.canvas(view) != after_pan, "the fractal canvas did not change after the wheel")
        # Pinch: two fingers spreading zoom in about their midpoint.
        n = self.current(view)
        self.pinch("canvas-fractal", 80)
        self.finished(view, n)
        args3 = self.args(view)
        zoom3 = float(args3[args3.index("--zoom") + 1])
        self.check(zoom3 > zoom * 1.5, f"a pinch did not zoom in: --zoom {zoom} -> {zoom3}")
        log(f"  fractal: drag, wheel and pinch: {' '.join(args3)}")
        # Julia: ctrl-drag moves c, a click on the inset picks it.
        self.go(view, ["julia", "--size", "320x200"])
        c0 = self.args(view)[self.args(view).index("--c") + 1]
        n = self.current(view)
        self.drag("canvas-fractal", 40, -20, key=Keys.CONTROL)
        self.finished(view, n)
        c1 = self.args(view)[self.args(view).index("--c") + 1]
        self.check(c1 != c0, f"ctrl-drag did not move Julia's c ({c0})")
        self.wait("the c picker's picture", lambda: self.js(
            "const c = document.getElementById('fractal-inset'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            "let lit = 0; for (let i = 0; i < d.length; i += 4) if (d[i] + d[i+1] + d[i+2] > 60) lit++; return lit > d.length / 40;"), 60)
        n = self.current(view)
        ActionChains(self.d).move_to_element_with_offset(self.el("fractal-inset"), -30, -20).click().perform()
        self.finished(view, n)
        c2 = self.args(view)[self.args(view).index("--c") + 1]
        self.check(c2 != c1, f"a click on the inset did not pick c ({c1})")
        log(f"  fractal: julia --c {c0} -> ctrl-drag {c1} -> inset {c2}")
        # A fixed view, a few times: the latency, and the same pixels as the command line.
        ids = []
        for zoom in ("500", "600", "700", "500", "600"):
            self.go(view, FIXED_FRACTAL[:6] + [zoom] + FIXED_FRACTAL[6:])
            ids.append(self.current(view))
        fixed = self.args(view)
        self.check(fixed == FIXED_FRACTAL[:6] + ["600"] + FIXED_FRACTAL[6:], f"the page's view is not the link's: {fixed}")
        self.same_as_cli(view, "fractal", fixed, "fractal")
        self.pan_moves_by_whole_pixels("at --zoom 600")
        self.latency["fractal"] = self.latencies(view, ids)
        previews = [h["latencyMs"] for h in self.g(f"history('{view}')") if h["id"] in ids and h["stage"] == "preview"]
        if previews:
            self.latency["fractal"]["preview_ms_median"] = round(statistics.median(previews), 1)
        # Deep: a view at 1e40 zoomed further by the wheel; the centre's digits grow exactly.
        deep = ["mandelbrot", "--size", "320x200", "--center", ",".join(DEEP_CENTER), "--zoom", "1e40", "--iterations", "3000"]
        self.go(view, deep)
        n = self.current(view)
        self.wheel("canvas-fractal", -100)
        frame = self.finished(view, n)
        deeper = self.args(view)
        z = deeper[deeper.index("--zoom") + 1]
        self.check(z == "1.5e40", f"one wheel notch at 1e40 should give --zoom 1.5e40, got {z}")
        centre = deeper[deeper.index("--center") + 1]
        self.check(len(centre) > 80, f"the deep centre lost digits: {centre}")
        self.same_as_cli(view, "fractal", deeper, "fractal-deep")
        self.pan_moves_by_whole_pixels("at --zoom 1.5e40")
        self.latency["fractal_deep"] = {"final_ms": frame["latencyMs"], "server_wall_ms": frame["wallMs"], "zoom": z}
        kfr = self.wait("the .kfr location", lambda: self.g("location"), 30)
        self.check("Zoom" in kfr or "zoom" in kfr, f"the .kfr text has no zoom: {kfr!r}")
        frame = (self.g("lastFrame") or {})[view]
        cli_box = self.el("fractal-cli").get_attribute("value")
        self.check(cli_box == frame["command"], f"the CLI box does not show the server's command: {cli_box!r} vs {frame['command']!r}")
        self.auto_iterations(view)
        self.locate_and_colour(view)
        self.zoom_video(view)
        # The picture for the screenshot, at the window's size.
        self.go(view, ["mandelbrot"] + FIXED_FRACTAL[3:5] + ["--zoom", "500"] + FIXED_FRACTAL[6:])
        self.screenshot("serve-fractal.png")

    def auto_iterations(self, view):
        """--iterations auto: the count the server found is shown beside the field and written in
        the .kfr, the CLI box keeps auto, and the command with the count gives the same picture."""
        args = ["mandelbrot", "--size", "64x40", "--center", ",".join(AUTO_CENTER), "--zoom", "1e9", "--iterations", "auto"]
        frame = self.go(view, args)
        n = frame.get("iterations")
        self.check(isinstance(n, int) and n > 128, f"the auto frame carries no count above the default: {frame}")
        shown = self.el("fractal-iterations-chosen").text
        self.check(shown == f"found {n}", f"the page shows {shown!r} beside the iterations field, not 'found {n}'")
        self.check(self.el("fractal-iterations").get_attribute("value") == "auto", "the iterations field lost 'auto'")
        self.check("--iterations auto" in self.el("fractal-cli").get_attribute("value"), "the CLI box does not say --iterations auto")
        kfr = self.wait("the auto view's .kfr", lambda: (lambda t: t if t and f"Iterations: {n}" in t else None)(self.g("location")), 30)
        self.check(f"Iterations: {n}" in kfr, f"the .kfr does not record the count {n}: {kfr!r}")
        fixed = args[:-1] + [str(n)]
        self.same_as_cli(view, "fractal", fixed, "fractal-auto")
        log(f"  fractal: --iterations auto at 1e9 found {n}; the .kfr records it and the CLI with it gives the same picture")

    def locate_and_colour(self, view):
        """"Nearest minibrot" goes to the view glint locate finds; the colouring menu adds --color,
        and the distance-estimate picture is the command line's."""
        self.go(view, ["mandelbrot", "--size", "96x60", "--center", "-1.75,0", "--zoom", "10", "--iterations", "300"])
        n = self.current(view)
        self.el("fractal-locate-minibrot").click()
        self.finished(view, n)
        args = self.args(view)
        zoom = float(args[args.index("--zoom") + 1])
        self.check(zoom > 20 and args[args.index("--center") + 1] != "-1.75,0", f"Nearest minibrot did not move the view: {args}")
        n = self.current(view)
        Select(self.el("fractal-color")).select_by_visible_text("de")
        self.finished(view, n)
        args = self.args(view)
        self.check("--color" in args and args[args.index("--color") + 1] == "de", f"the colouring menu did not add --color de: {args}")
        self.same_as_cli(view, "fractal", args, "fractal-de")
        Select(self.el("fractal-color")).select_by_visible_text("count")
        log(f"  fractal: Nearest minibrot went to --zoom {zoom:g}; --color de equals the command line's")

    def zoom_video(self, view):
        """"Zoom video…" on a view with --iterations auto: a tiny video made by the server, its
        progress shown, the download link clicked and the file checked: the dialog's two command
        lines, run here, give the same strip and frames byte for byte (tar), or an MP4 of the
        frames asked for (ffprobe, where it is installed)."""
        frame = self.go(view, ["mandelbrot", "--size", "96x60", "--center", "-0.75,0.1", "--zoom", "1e4", "--iterations", "auto"])
        found = frame.get("iterations")
        self.check(isinstance(found, int) and found > 0, f"the auto frame carries no count: {frame}")
        self.el("fractal-zoomvideo").click()
        self.wait("the zoom video dialog", lambda: self.js("return document.getElementById('zoomvideo-dialog').open"), 10)
        for id_, value in (("zoomvideo-size", "48x32"), ("zoomvideo-seconds", "0.4"), ("zoomvideo-fps", "10"), ("zoomvideo-columns", "64")):
            field = self.el(id_)
            field.clear()
            field.send_keys(value)
        downloads = os.path.join(self.work, "downloads")
        os.makedirs(downloads, exist_ok=True)
        self.d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        self.el("zoomvideo-start").click()
        link = self.wait("the zoom video's download link", lambda: self.js(
            "const a = document.getElementById('zoomvideo-download');"
            "if (a.offsetParent !== null && a.href) return {href: a.href, name: a.download};"
            "const s = document.getElementById('zoomvideo-status').textContent; if (s.startsWith('failed')) return {error: s}; return null;"), 180)
        self.check("error" not in link, f"the zoom video failed: {link.get('error')}")
        progress = float(self.el("zoomvideo-progress").get_attribute("value"))
        self.check(progress == 1, f"the progress bar reads {progress} when the video is done")
        commands = self.el("zoomvideo-cli").get_attribute("value").split("\n")
        self.check(len(commands) == 2 and "--exp-map 64" in commands[0] and f"--iterations {found}" in commands[0]
                   and "--frames 4" in commands[1], f"the dialog's commands are not the video's: {commands}")
        self.el("zoomvideo-download").click()
        path = os.path.join(downloads, link["name"])
        self.wait(f"the download of {link['name']}", lambda: os.path.exists(path) and not os.path.exists(path + ".crdownload"), 60)
        self.el("zoomvideo-close").click()
        self.wait("the dialog to close", lambda: not self.js("return document.getElementById('zoomvideo-dialog').open"), 10)
        strip_cmd, video_cmd = (shlex.split(c) for c in commands)
        strip = os.path.join(self.work, "video-strip.png")
        self.cli(*strip_cmd[1:-1], strip, "--device", self.device, "-q")
        if link["name"].endswith(".tar"):
            with tarfile.open(path) as tar:
                names = tar.getnames()
                files = {n: tar.extractfile(n).read() for n in names}
            want = ["strip.png"] + [f"frames/frame_{k:05d}.png" for k in range(4)]
            self.check(names == want, f"the archive holds {names}, not {want}")
            with open(strip, "rb") as f:
                self.check(f.read() == files["strip.png"], "the video's strip is not the command line's")
            frames = os.path.join(self.work, "video-frames")
            self.cli(video_cmd[1], strip, *video_cmd[3:-1], frames, "-q")
            for k in range(4):
                with open(os.path.join(frames, f"frame_{k:05d}.png"), "rb") as f:
                    self.check(f.read() == files[f"frames/frame_{k:05d}.png"], f"frame {k} is not glint zoomvideo's")
            what = "4 PNG frames and the strip, each the command lines' byte for byte"
        else:
            with open(path, "rb") as f:
                head = f.read(12)
            self.check(head[4:8] == b"ftyp", f"{link['name']} is not an MP4 file")
            what = "an MP4"
            if os.access("/usr/bin/ffprobe", os.X_OK):
                r = subprocess.run(["/usr/bin/ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                    "stream=width,height,nb_read_frames", "-of", "csv=p=0", path], capture_output=True, text=True, timeout=60)
                self.check(r.stdout.strip() == "48,32,4", f"ffprobe reads {r.stdout.strip()!r} in the video, not 48,32,4")
                what += " of 4 frames of 48x32 (ffprobe)"
        log(f"  fractal: Zoom video (--iterations {found}) downloaded as {link['name']}: {what}")

    def rtow(self):
        view = "rtow"
        self.tab(view)
        base = ["--scene", "ch10", "--size", "160x100", "--spp", "8"]
        self.go(view, base)
        h0 = self.canvas(view)
        n = self.current(view)
        self.drag("canvas-rtow", 80, 30)
        self.finished(view, n)
        a1 = self.args(view)
        self.check("--orbit" in a1, f"a drag did not orbit: {a1}")
        h1 = self.canvas(view)
        self.check(h1 != h0, "the ray tracer's canvas did not change after a drag")
        n = self.current(view)
        self.wheel("canvas-rtow", 300)
        self.finished(view, n)
        a2 = self.args(view)
        self.check("--distance" in a2, f"the wheel did not move the camera: {a2}")
        factors = [float(a2[i + 1]) for i, a in enumerate(a2) if a == "--distance"]
        self.check(all(0.314 <= f <= 2.718 for f in factors), f"--distance factors out of 0.314...2.718: {factors}")
        n = self.current(view)
        self.drag("canvas-rtow", 60, 0, key=Keys.SHIFT)
        frame = self.finished(view, n)
        a3 = self.args(view)
        self.check("--roll" in a3, f"shift-drag did not roll: {a3}")
        self.check(self.canvas(view) != h1, "the ray tracer's canvas did not change after the wheel and roll")
        passes = [h for h in self.g(f"history('{view}')") if h["id"] == frame["id"] and h["stage"] == "pass"]
        self.check(len(passes) >= 1, "the ray tracer sent no pass before the final frame")
        log(f"  rtow: orbit, distance, roll: {' '.join(a3)} ({len(passes)} passes)")
        self.same_as_cli(view, "rtow", a3, "rtow")
        # Latency: the first pass and the final frame, a few times.
        ids, firsts = [], []
        for lon in ("10", "20", "30"):
            self.go(view, base + ["--orbit", f"{lon},5"])
            rid = self.current(view)
            ids.append(rid)
            first = [h for h in self.g(f"history('{view}')") if h["id"] == rid and h["stage"] == "pass"]
            if first:
                firsts.append(first[0]["latencyMs"])
        self.latency["rtow"] = self.latencies(view, ids)
        if firsts:
            self.latency["rtow"]["first_pass_ms_median"] = round(statistics.median(firsts), 1)
        self.latency["rtow"]["samples_per_second"] = (self.g("lastFrame") or {})[view].get("samplesPerSecond")
        self.go(view, ["--scene", "cover", "--size", "360x240", "--spp", "8", "--orbit", "20,3"])
        self.screenshot("serve-rtow.png")

    def keys(self):
        """The keyboard and the history: + and - double and halve the exact zoom, an arrow moves
        the centre by a tenth of the view, ? shows the help overlay and Escape or a click hides
        it, each key's settled view is one history entry that Back and Forward restore (address,
        options and the server's picture), and the digits switch views (2: the ray tracer, whose
        arrows orbit)."""
        view = "fractal"
        t0 = time.monotonic()
        self.tab(view)
        self.go(view, ["mandelbrot", "--size", "160x100", "--center", "-0.75,0.1", "--zoom", "3", "--iterations", "200"])
        self.js("if (document.activeElement) document.activeElement.blur()")

        def send(key):
            ActionChains(self.d).send_keys(key).perform()

        def press(key):
            n = self.current(view)
            send(key)
            self.finished(view, n)
            return {"hash": self.js("return location.hash"), "args": self.args(view), "png": self.g(f"lastPNG('{view}')")}

        def opt(args, name):
            return args[args.index(name) + 1]

        def help_shown():
            return self.js("const h = document.getElementById('help'); return h.offsetParent !== null || getComputedStyle(h).display !== 'none';")

        send("?")
        self.wait("the help overlay", help_shown, 10)
        text = self.el("help").text
        self.check(all(k in text for k in ("PageUp", "Home", "Escape", "palette", "iterations")), f"the help overlay lacks keys: {text!r}")
        send(Keys.ESCAPE)
        self.wait("Escape to hide the help overlay", lambda: not help_shown(), 10)
        send("?")
        self.wait("the help overlay again", help_shown, 10)
        self.el("help").click()
        self.wait("a click to hide the help overlay", lambda: not help_shown(), 10)
        entries = self.js("return history.length")
        first = press("+")
        self.check(opt(first["args"], "--zoom") == "6" and opt(first["args"], "--center") == "-0.75,0.1",
                   f"+ did not double --zoom 3 about the centre -0.75,0.1: {first['args']}")
        self.check(self.el("fractal-zoom").get_attribute("value") == "6", "+: the zoom field does not read 6")
        second = press(Keys.ARROW_RIGHT)
        re1, im1 = (Decimal(x) for x in opt(first["args"], "--center").split(","))
        re2, im2 = (Decimal(x) for x in opt(second["args"], "--center").split(","))
        tenth = Decimal(2 * 160) / Decimal(10 * 6 * 100)   # a tenth of the width: 2W / (zoom H) / 10
        self.check(im2 == im1 and abs(re2 - re1 - tenth) < Decimal("1e-6"),
                   f"→ did not move the centre a tenth of the view ({tenth:.6f}): {re1},{im1} -> {re2},{im2}")
        third = press("-")
        self.check(opt(third["args"], "--zoom") == "3" and opt(third["args"], "--center") == opt(second["args"], "--center"),
                   f"- did not halve --zoom 6 about the centre: {third['args']}")
        grown = self.js("return history.length") - entries
        self.check(grown == 3, f"three keys made {grown} history entries, not 3")
        for step, want in (("back", second), ("back", first), ("forward", second)):
            n = self.current(view)
            self.js(f"history.{step}()")
            self.wait(f"{step} to {want['hash']}", lambda: self.js("return location.hash") == want["hash"], 10)
            self.finished(view, n)
            self.check(self.args(view) == want["args"], f"{step}: the view is {self.args(view)}, not {want['args']}")
            self.check(self.g(f"lastPNG('{view}')") == want["png"], f"{step}: the picture is not the one rendered for {want['hash']}")
        send("2")
        self.wait("2 to show the ray tracer", lambda: self.g("activeView") == "rtow" and self.js("return location.hash").startswith("#rtow"), 10)
        lon = float(opt(self.args("rtow"), "--orbit").split(",")[0])
        send(Keys.ARROW_LEFT)
        self.wait("← to orbit the ray tracer", lambda: float(opt(self.args("rtow"), "--orbit").split(",")[0]) == lon + 15, 10)
        send("1")
        self.wait("1 to show the fractal", lambda: self.g("activeView") == view, 10)
        log(f"  keys: ? help, + - → on the fractal, Back Back Forward restore the views, 2 and ← orbit the ray tracer "
            f"({time.monotonic() - t0:.1f} s)")

    def live_frames(self, view, rid, count, timeout=60):
        def enough():
            hist = [h for h in self.g(f"history('{view}')") if h["id"] == rid and h["stage"] == "live"]
            return hist if len(hist) >= count else None
        return self.wait(f"{count} live {view} frames", enough, timeout)

    def mist(self):
        view = "mist"
        self.tab(view)
        Select(self.el("mist-source")).select_by_value("render")
        self.el("mist-start").click()
        self.wait("the mist to start", lambda: self.current(view) > 0, 10)
        rid = self.current(view)
        self.live_frames(view, rid, 3)
        h0 = self.canvas(view)
        sent0 = self.g("sent")
        self.drag("canvas-mist", 200, 60, steps=10)
        self.wait("the wipe to be sent", lambda: self.g("sent")["wipe"] > sent0["wipe"], 10)
        hist = self.live_frames(view, rid, len(self.g(f"history('{view}')")) + 5)
        self.check(self.canvas(view) != h0, "the mist's canvas did not change")
        ActionChains(self.d).move_to_element_with_offset(self.el("mist-gravity"), 25, 0).click().perform()
        self.wait("the gravity to be sent", lambda: self.g("sent")["gravity"] > sent0["gravity"], 10)
        live = [h for h in self.g(f"history('{view}')") if h["id"] == rid and h["stage"] == "live"]
        frame = (self.g("lastFrame") or {})[view]
        self.latency["mist"] = {"first_frame_ms": live[0]["sinceRequestMs"],
                                "frame_interval_ms_median": round(statistics.median(h["latencyMs"] for h in live[1:]), 1),
                                "server_wall_ms_median": round(statistics.median(h["wallMs"] for h in live), 1),
                                "fps": frame.get("fps"), "size": f"{frame['width']}x{frame['height']}"}
        log(f"  mist: {len(live)} live frames on the last rendered picture, wipe and gravity sent, {frame.get('fps'):.1f} fps")
        # An uploaded picture (the file input, then POST /api/upload).
        picture = os.path.join(self.work, "upload.png")
        self.cli("fractal", "julia", "--size", "320x200", "--palette", "ocean", "--smooth", "-o", picture, "--device", self.device, "-q")
        Select(self.el("mist-source")).select_by_value("upload")
        self.el("mist-stop").click()
        self.el("mist-file").send_keys(picture)
        self.wait("the upload", lambda: self.g("uploads")["mist"], 30)
        n = self.current(view)
        self.el("mist-start").click()
        self.wait("the mist on the upload", lambda: self.current(view) > n, 10)
        rid = self.current(view)
        self.live_frames(view, rid, 15)
        self.drag("canvas-mist", -150, 80, steps=10)
        self.live_frames(view, rid, 25)
        frame = (self.g("lastFrame") or {})[view]
        self.check((frame["width"], frame["height"]) == (320, 200), f"the mist on the upload is {frame['width']}x{frame['height']}")
        self.screenshot("serve-mist.png")
        self.el("mist-stop").click()
        time.sleep(1)   # frames already sent arrive after the stop
        status = self.el("status-text").text
        self.check("stopped" in status and "live" not in status, f"the status after Stop: {status}")
        log("  mist: on an uploaded picture, wiped")
        # The camera (the browser's made-up one): frames drawn, sent as raw RGBA, misted.
        Select(self.el("mist-source")).select_by_value("camera")
        size = self.el("mist-camera-size")
        size.clear()
        size.send_keys("160x120")
        sent = self.g("sent")["camera"]
        n = self.current(view)
        self.el("mist-start").click()
        self.wait("the mist on the camera", lambda: self.current(view) > n, 20)
        rid = self.current(view)
        live = self.live_frames(view, rid, 10)
        frame = (self.g("lastFrame") or {})[view]
        camera_frames = self.g("sent")["camera"] - sent
        self.check((frame["width"], frame["height"]) == (160, 120), f"the camera mist is {frame['width']}x{frame['height']}, not 160x120")
        self.check(camera_frames >= 5, f"only {camera_frames} camera frames were sent")
        self.latency["mist_camera"] = {"first_frame_ms": live[0]["sinceRequestMs"], "fps": frame.get("fps"),
                                       "camera_frames_sent": camera_frames, "size": "160x120"}
        self.el("mist-stop").click()
        log(f"  mist: on the camera, {camera_frames} camera frames sent, {frame.get('fps'):.1f} fps")

    def pulse(self):
        view = "pulse"
        self.tab(view)
        self.el("pulse-start").click()
        self.wait("the pulse to start", lambda: self.current(view) > 0, 10)
        rid = self.current(view)
        self.live_frames(view, rid, 2)
        hashes = {self.canvas(view)}
        deadline = time.monotonic() + 20
        while len(hashes) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
            hashes.add(self.canvas(view))
        self.check(len(hashes) >= 3, "the pulse's canvas did not change while live")
        live = self.live_frames(view, rid, 10)
        # The hue slider, by keyboard: the live pulse restarts with the new hue.
        slider = self.el("pulse-hue")
        slider.click()
        slider.send_keys(Keys.RIGHT * 30)
        self.wait("the pulse to restart with the new hue", lambda: self.current(view) > rid and "--hue" in self.args(view)
                  and self.args(view)[self.args(view).index("--hue") + 1] != "0", 10)
        # Thirty key presses can restart it more than once (each restart waits 100 ms for the
        # next change): the job to follow is the last one, when no newer one comes.
        rid2 = self.current(view)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.5)
            if self.current(view) == rid2:
                break
            rid2 = self.current(view)
        self.live_frames(view, rid2, 5)
        frame = (self.g("lastFrame") or {})[view]
        self.latency["pulse"] = {"first_frame_ms": live[0]["sinceRequestMs"],
                                 "frame_interval_ms_median": round(statistics.median(h["latencyMs"] for h in live[1:]), 1),
                                 "server_wall_ms_median": round(statistics.median(h["wallMs"] for h in live), 1),
                                 "fps": frame.get("fps")}
        self.screenshot("serve-pulse.png")
        self.el("pulse-stop").click()
        log(f"  pulse: live, hue moved to {self.args(view)[self.args(view).index('--hue') + 1]}, {frame.get('fps'):.1f} fps")

    def iso(self):
        view = "iso"
        # The current view: a fractal picture, rendered last.
        self.tab("fractal")
        self.go("fractal", ["julia", "--size", "320x200", "--c", "-0.8,0.156", "--palette", "rainbow", "--smooth"])
        last = self.save_png("fractal", "iso-source.png")
        self.tab(view)
        h0 = self.canvas(view)
        depth = self.el("iso-depth")
        depth.clear()
        depth.send_keys("24", Keys.TAB)
        n = self.current(view)
        self.el("iso-apply").click()
        frame = self.finished(view, n)
        self.check(self.canvas(view) != h0, "the iso canvas did not change")
        args = self.args(view)
        self.check(args[0] == "upload:last", f"iso did not apply to the current view: {args}")
        self.same_as_cli(view, "iso", [last] + args[1:], "iso", opaque_frames=True)
        self.latency["iso"] = {"final_ms": frame["latencyMs"], "server_wall_ms": frame["wallMs"],
                               "size": f"{frame['width']}x{frame['height']}"}
        # Applied again with other settings: iso of the view still, not of the first result.
        for field, value in (("iso-depth", "60"), ("iso-radius", "24")):
            self.el(field).clear()
            self.el(field).send_keys(value, Keys.TAB)
        n = self.current(view)
        self.el("iso-apply").click()
        self.finished(view, n)
        again = self.args(view)
        self.check(again[0] == "upload:last" and "60" in again and "24" in again, f"iso's second apply: {again}")
        cli = self.el("iso-cli").get_attribute("value")
        self.check(cli.startswith("glint iso view.png") and "--depth 60" in cli, f"the CLI box after re-apply: {cli}")
        self.same_as_cli(view, "iso", [last] + again[1:], "iso-again", opaque_frames=True)
        self.screenshot("serve-iso.png")

    def compare(self):
        view = "compare"
        self.tab(view)
        Select(self.el("compare-from")).select_by_value("fractal")
        text = self.el("compare-args").get_attribute("value")
        self.check(shlex.split(text) == ["fractal", *self.args("fractal")], f"compare did not take the fractal view: {text!r}")
        a = Select(self.el("compare-a")).first_selected_option.get_attribute("value")
        b = Select(self.el("compare-b")).first_selected_option.get_attribute("value")
        self.check(a == "cpu" and b.startswith("opencl"), f"compare's devices are {a} and {b}, not cpu and opencl")
        self.el("compare-run").click()
        result = self.wait("the comparison", lambda: self.g("lastCompare"), 180)
        self.check("error" not in result, f"compare failed: {result.get('error')}")
        r = result["result"]
        self.check(r.get("passed") is True, f"cpu and opencl differ beyond the tolerance: {r}")
        for side in ("a", "b", "diff"):
            drawn = self.js(f"const c = document.getElementById('canvas-compare-{side}');"
                            "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                            "for (let i = 0; i < d.length; i += 4) if (d[i] + d[i+1] + d[i+2] > 0) return true; return false;")
            self.check(drawn, f"compare's {side} picture is empty")
        verdict = self.el("compare-verdict").text
        self.check("within tolerance" in verdict, f"compare's verdict reads {verdict!r}")
        self.latency["compare"] = {"ms": result["ms"], "a_wall_ms": round(r["a"]["wall_ms"], 1), "b_wall_ms": round(r["b"]["wall_ms"], 1),
                                   "a": r["a"]["device"], "b": r["b"]["device"]}
        log(f"  compare: {verdict}")
        self.compare_viewer(shlex.split(text), a, b, result)
        self.screenshot("serve-compare.png")

    def device_pixels(self, view, what):
        """The view's last frame fills its canvas, whose pixels are the screen's: its size times
        the device pixel ratio (within the rounding of a CSS pixel). The canvas's size."""
        m = self.js(f"const c = document.getElementById('canvas-{view}'); const r = c.getBoundingClientRect();"
                    "return {w: c.width, h: c.height, cssW: r.width, cssH: r.height, dpr: window.devicePixelRatio};")
        frame = (self.g("lastFrame") or {})[view]
        args = self.args(view)
        size = args[args.index("--size") + 1]
        self.check((frame["width"], frame["height"]) == (m["w"], m["h"]) and size == f"{m['w']}x{m['h']}",
                   f"{what}: the {frame['width']}x{frame['height']} frame (--size {size}) is not the {m['w']}x{m['h']} canvas")
        for side, css in (("w", "cssW"), ("h", "cssH")):
            self.check(abs(m[css] * m["dpr"] - m[side]) <= m["dpr"],
                       f"{what}: the canvas is {m['w']}x{m['h']} pixels shown in {m['cssW']}x{m['cssH']} CSS pixels at ratio {m['dpr']}")
        return m

    def stages_follow_the_preview(self, hist, rid, what):
        """Request `rid`'s frames came as preview, a half-size pass, final when the preview took
        over a sixteenth of 150 ms (the server's rule: the whole picture would take longer than
        150 ms) and the picture is 320x200 or more, else as preview, final. Whether it had a pass."""
        frames = [h for h in hist if h["id"] == rid]
        stages = [h["stage"] for h in frames]
        pixels = frames[-1]["width"] * frames[-1]["height"] if frames else 0
        slow = bool(frames) and frames[0]["stage"] == "preview" and frames[0]["wallMs"] * 16 > 150 and pixels >= 320 * 200
        expected = ["preview", "pass", "final"] if slow else ["preview", "final"]
        self.check(stages == expected, f"{what} came as {stages}, not {', '.join(expected)} (preview {frames[0]['wallMs'] if frames else '?'} ms)")
        return slow

    def resolution(self):
        """A view of size auto renders at its canvas's size in the screen's pixels at ratios 1 and
        2, again when the window is resized, at a fraction with the resolution menu; a view slower
        than 150 ms shows a half-size pass between its preview and its final frame. Latency at the
        window's resolution: wheel notch to final frame, a deep frame, the ray tracer's first pass."""
        view = "fractal"
        self.tab(view)
        spot = ["mandelbrot", "--center", "-0.74364,0.13182", "--zoom", "30", "--iterations", "64"]
        self.go(view, spot)
        self.check(self.el("fractal-size").get_attribute("value") == "auto", "a link without --size is not auto-sized")
        m1 = self.device_pixels(view, "ratio 1")
        viewport = self.js("return [window.innerWidth, window.innerHeight]")
        try:
            n = self.current(view)
            self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": viewport[0], "height": viewport[1],
                                                                          "deviceScaleFactor": 2, "mobile": False})
            self.finished(view, n)
            m2 = self.device_pixels(view, "ratio 2")
            self.check(m2["dpr"] == 2 and abs(m2["w"] - 2 * m1["w"]) <= 2, f"at ratio 2 the canvas is {m2['w']} pixels wide, at 1 {m1['w']}")
            log(f"  resolution: {m1['w']}x{m1['h']} pixels at ratio 1, {m2['w']}x{m2['h']} at ratio 2, each the canvas's")
            # A narrower window: rendered again at the new size.
            n = self.current(view)
            self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": viewport[0] - 300, "height": viewport[1],
                                                                          "deviceScaleFactor": 1, "mobile": False})
            self.finished(view, n)
            m3 = self.device_pixels(view, "after a resize")
            self.check(m3["w"] < m1["w"] - 200, f"after a 300-pixel narrower window the canvas is {m3['w']} wide, was {m1['w']}")
            n = self.current(view)
        finally:
            self.d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.wait("the window's size back", lambda: self.js("return window.innerWidth") == viewport[0], 10)
        self.finished(view, n)
        # Half the screen's resolution: half the pixels a side, the canvas shown at the same size.
        n = self.current(view)
        Select(self.el("resolution")).select_by_value("0.5")
        self.finished(view, n)
        half = self.js("const c = document.getElementById('canvas-fractal'); return [c.width, c.height];")
        self.check(abs(half[0] - m1["w"] // 2) <= 1 and abs(half[1] - m1["h"] // 2) <= 1,
                   f"at resolution ½ the picture is {half[0]}x{half[1]}, the screen's {m1['w']}x{m1['h']}")
        n = self.current(view)
        Select(self.el("resolution")).select_by_value("1")
        self.finished(view, n)
        # Wheel notches at the window's resolution (the fractal case's fixed view, there at
        # 320x200): each view's final frame after its notch; each took long enough to come as
        # preview, a half-size pass, then final.
        self.go(view, ["mandelbrot"] + FIXED_FRACTAL[3:6] + ["500"] + FIXED_FRACTAL[6:])
        ids = []
        for _ in range(3):
            n = self.current(view)
            self.wheel("canvas-fractal", -100)
            self.finished(view, n)
            ids.append(self.current(view))
        self.latency["fractal_window"] = self.latencies(view, ids)
        self.latency["fractal_window"]["size"] = f"{m1['w']}x{m1['h']}"
        hist = self.g(f"history('{view}')")
        for stage in ("preview", "pass"):
            times = [h["latencyMs"] for h in hist if h["id"] in ids and h["stage"] == stage]
            if times:
                self.latency["fractal_window"][f"{stage}_ms_median"] = round(statistics.median(times), 1)
        passes = sum(self.stages_follow_the_preview(hist, rid, f"a {m1['w']}x{m1['h']} view of 500 iterations") for rid in ids)
        # A view quicker than that: no pass; one slower on any device here: a pass.
        frame = self.go(view, ["mandelbrot", "--size", "64x40", "--iterations", "32"])
        self.check(not self.stages_follow_the_preview(self.g(f"history('{view}')"), frame["id"], "a 64x40 view"),
                   "a 64x40 view of 32 iterations came with a pass")
        if passes == 0:
            frame = self.go(view, ["mandelbrot", "--size", "1600x1000", "--iterations", "20000"])
            self.check(self.stages_follow_the_preview(self.g(f"history('{view}')"), frame["id"], "a 1600x1000 view of 20000 iterations"),
                       "a 1600x1000 view of 20000 iterations came without a pass")
        log(f"  resolution: wheel notch to final at {m1['w']}x{m1['h']}: {self.latency['fractal_window']['final_ms_median']} ms median "
            f"(preview {self.latency['fractal_window'].get('preview_ms_median')}, pass {self.latency['fractal_window'].get('pass_ms_median')}); "
            "a quick view skips the pass")
        # The ray tracer at the window's size: its first pass.
        self.tab("rtow")
        firsts = []
        passes = []
        for lon in ("10", "20"):
            rframe = self.go("rtow", ["--scene", "ch10", "--spp", "2", "--orbit", f"{lon},5"])
            frames = [h for h in self.g("history('rtow')") if h["id"] == rframe["id"]]
            self.check(frames[0]["stage"] == "preview" and frames[0]["width"] * 4 <= rframe["width"] + 3,
                       f"the ray tracer at the window's size did not answer first with a quarter-size preview: {frames[:2]}")
            firsts.append(frames[0]["latencyMs"])
            passes += [h["latencyMs"] for h in frames if h["stage"] == "pass"][:1]
        r = self.device_pixels("rtow", "the ray tracer")
        self.latency["rtow_window"] = {"size": f"{r['w']}x{r['h']}", "preview_ms": firsts,
                                       "preview_ms_median": round(statistics.median(firsts), 1),
                                       "first_pass_ms_median": round(statistics.median(passes), 1) if passes else None}
        self.screenshot("serve-resolution.png")
        self.go("rtow", ["--scene", "ch10", "--size", "160x100", "--spp", "8"])
        self.tab(view)

    def open_link(self, address):
        """Opens the page afresh at `address` (its #VIEW=... part), as a link followed; the page
        left must have reported no errors but those expected, as run() checks at the end."""
        errors = self.g("errors")
        self.check(len(errors) == self.expected_errors, f"the page reported errors: {errors}")
        self.expected_errors = 0
        self.d.get("about:blank")
        self.d.get(self.server.url.split("#")[0] + address)
        self.wait("the page to connect", lambda: self.has_hook() and self.g("ready"), 30)

    def address(self):
        return self.js("return location.hash")

    def first_live_png(self, view, rid, name):
        """The first frame of live job `rid` of `view`, saved: (its path, its frame index)."""
        first = self.wait(f"the first {view} frame of #{rid}", lambda: (lambda f: f if f and f["id"] == rid else None)(
            self.g(f"firstPNG('{view}')")), 60)
        path = os.path.join(self.work, f"{name}-page.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(first["png"]))
        return path, first["frame"]

    def links(self):
        """Every view's link reproduces its picture: each view's address, as the page writes it
        after Apply, Start or Compare, opened afresh shows the same settings and the picture the
        command line makes (iso and mist of the rendered view the link names; the pulse's and the
        mist's first frame; compare's job on the same two devices)."""
        source = ["julia", "--size", "96x60", "--c", "-0.8,0.156", "--palette", "rainbow", "--smooth", "--iterations", "200"]
        source_png = os.path.join(self.work, "link-source.png")
        self.cli("fractal", *source, "-o", source_png, "--device", self.device, "-q")
        # Iso of the fractal view.
        self.tab("fractal")
        self.go("fractal", source)
        source = self.args("fractal")   # in the page's order
        self.tab("iso")
        Select(self.el("iso-source")).select_by_value("last")
        for field, value in (("iso-depth", "40"), ("iso-radius", "12")):
            self.el(field).clear()
            self.el(field).send_keys(value, Keys.TAB)
        n = self.current("iso")
        self.el("iso-apply").click()
        self.finished("iso", n)
        iso_args = self.args("iso")
        address = self.address()
        self.check(address.startswith("#iso=") and "&fractal=" in address, f"iso's address names no source view: {address}")
        self.open_link(address)
        self.finished("iso", 0)
        self.check(self.args("iso") == iso_args and self.args("fractal") == source,
                   f"the iso link gave iso {self.args('iso')} of fractal {self.args('fractal')}, not {iso_args} of {source}")
        self.check(self.address() == address, f"the iso link's address became {self.address()}")
        page = self.save_png("iso", "link-iso-page.png")
        cli = os.path.join(self.work, "link-iso-cli.png")
        self.cli("iso", source_png, *iso_args[1:], "-o", cli, "--device", self.device, "-q")
        self.same_pictures("iso", "iso", [source_png] + iso_args[1:], page, cli, opaque_frames=True)
        log(f"  links: {urllib.parse.unquote(address)} reproduces iso of the fractal view")
        # The mist on the view: its first frame is the command's frame 0.
        self.tab("mist")
        Select(self.el("mist-source")).select_by_value("render")
        for field, value in (("mist-drops", "30"), ("mist-sigma", "12"), ("mist-seed", "7")):
            self.el(field).clear()
            self.el(field).send_keys(value, Keys.TAB)
        n = self.current("mist")
        self.el("mist-start").click()
        self.wait("the mist to start", lambda: self.current("mist") > n, 10)
        mist_args = self.args("mist")
        address = self.address()
        self.el("mist-stop").click()
        self.check(address.startswith("#mist=") and "&fractal=" in address, f"the mist's address names no source view: {address}")
        self.open_link(address)
        rid = self.wait("the mist link's job", lambda: self.current("mist") or None, 60)
        page, frame = self.first_live_png("mist", rid, "link-mist")
        self.el("mist-stop").click()
        self.check(self.args("mist") == mist_args, f"the mist link gave {self.args('mist')}, not {mist_args}")
        self.check(frame == 0, f"the mist link's first frame is frame {frame}")
        frames = os.path.join(self.work, "link-mist-cli")
        self.cli("mist", "--input", source_png, *mist_args, "--frames", "1", "-o", frames, "--device", self.device, "-q")
        self.same_pictures("mist", "mist", mist_args, page, os.path.join(frames, "frame_00000.png"), opaque_frames=True)
        log(f"  links: {urllib.parse.unquote(address)} reproduces the mist's frame 0")
        # The pulse: settings from a link, its first frame the command's frame 0.
        pulse = ["--size", "64x36", "--hue", "0.257", "--purity-center", "0.6", "--purity-range", "0.35"]
        # Written by hand, in another order: the page's form replaces it in its own history entry.
        self.open_link("#pulse=" + urllib.parse.quote(" ".join(pulse[2:] + pulse[:2])))
        entries = self.js("return history.length")
        rid = self.wait("the pulse link's job", lambda: self.current("pulse") or None, 60)
        self.check(self.address() == "#pulse=" + urllib.parse.quote(" ".join(pulse), safe="") and self.js("return history.length") == entries,
                   f"the pulse link's address became {self.address()} in {self.js('return history.length')} history entries, was {entries}")
        page, frame = self.first_live_png("pulse", rid, "link-pulse")
        self.el("pulse-stop").click()
        self.check(self.args("pulse") == pulse, f"the pulse link gave {self.args('pulse')}, not {pulse}")
        frames = os.path.join(self.work, "link-pulse-cli")
        self.cli("pulse", *pulse, "--frames", str(frame + 1), "-o", frames, "--device", self.device, "-q")
        self.same_pictures("pulse", "pulse", pulse, page, os.path.join(frames, f"frame_{frame:05d}.png"), opaque_frames=True)
        log(f"  links: #pulse={' '.join(pulse)} reproduces frame {frame}")
        # Compare: the job and both devices.
        self.tab("compare")
        Select(self.el("compare-from")).select_by_value("custom")
        job = "fractal mandelbrot --size 48x30 --iterations 300"
        self.el("compare-args").clear()
        self.el("compare-args").send_keys(job)
        self.el("compare-run").click()
        first = self.wait("the comparison", lambda: (lambda c: c if c and c["request"]["args"] == job.split()[1:] else None)(
            self.g("lastCompare")), 180)
        address = self.address()
        self.open_link(address)
        again = self.wait("the link's comparison", lambda: self.g("lastCompare"), 180)
        self.check("error" not in again and again["request"] == first["request"],
                   f"the compare link ran {again.get('request')}, not {first['request']}")
        self.check(again["result"]["passed"] is True, f"the compare link's verdict: {again['result']}")
        log(f"  links: {urllib.parse.unquote(address)} runs the same comparison")

    def compare_viewer(self, words, a, b, result):
        """The comparison's viewer: keys flip A and B and show the difference; the readout under
        the pointer gives the values of the PNGs `glint WORKLOAD ARGS -o` writes on each device
        (read here, not by the browser); the wheel zooms about the pointer, which stays on its
        pixel, to 64 screen pixels a pixel; a drag pans and 0 fits again."""
        view = "compare"
        sides = {}
        for key, device in (("a", a), ("b", b)):
            path = os.path.join(self.work, f"compare-{key}.png")
            self.cli(*words, "-o", path, "--device", device, "-q")
            sides[key] = png_pixels(path)
        (w, h, pa), (_, _, pb) = sides["a"], sides["b"]

        def probe():
            return self.g("compareProbe")

        def press(key, what, condition):
            ActionChains(self.d).send_keys(key).perform()
            return self.wait(f"the compare viewer: {what}", lambda: (lambda p: p if condition(p) else None)(probe()), 10)

        p0 = probe()
        self.check(p0["shown"] == "a" and p0["fitted"] and p0["width"] == w and p0["height"] == h,
                   f"after the comparison the viewer should fit A ({w}x{h}): {p0}")
        hashes = {"a": self.canvas(view)}
        # Straight after the Compare button: Space flips the viewer, it does not press the button again.
        runs = self.g("lastCompare")["ms"]
        press(Keys.SPACE, "Space to show B", lambda p: p["shown"] == "b")
        hashes["b"] = self.canvas(view)
        press(Keys.SPACE, "Space to show A again", lambda p: p["shown"] == "a")
        self.check(self.canvas(view) == hashes["a"], "A shown again is not the picture A was")
        press("b", "b to show B", lambda p: p["shown"] == "b")
        self.check(self.canvas(view) == hashes["b"], "b does not show the picture Space showed as B")
        press("a", "a to show A", lambda p: p["shown"] == "a")
        self.check(self.g("lastCompare")["ms"] == runs and not self.js("return document.getElementById('compare-run').disabled"),
                   "a key in the compare view ran the comparison again")
        differ = [(x, y) for y in range(h) for x in range(w) if pa(x, y) != pb(x, y)]
        if differ:
            self.check(hashes["a"] != hashes["b"], f"{len(differ)} pixels differ but the viewer shows A and B alike")
        press("d", "d to show the difference", lambda p: p["shown"] == "diff")
        gain = probe()["gain"]
        press("e", "e to raise the gain", lambda p: p["shown"] == "diff" and p["gain"] == min(64, gain * 4))
        hashes["diff"] = self.canvas(view)
        self.check(hashes["diff"] != hashes["a"], "the difference looks like A")
        press("a", "a to show A", lambda p: p["shown"] == "a")

        # The pointer on a pixel: a differing one if there is one, else one that is not black.
        pick = differ[0] if differ else next(((x, y) for y in range(h // 3, h) for x in range(w // 3, w) if sum(pa(x, y)[:3]) > 0),
                                            (w // 2, h // 2))
        rect = self.js("const r = document.getElementById('canvas-compare').getBoundingClientRect(); return [r.left, r.top];")
        z0 = p0["zoom"]
        self.check(z0 >= 2, f"the fit's zoom is {z0}: the viewer is too small to aim at one pixel of {w}x{h}")
        sx = math.floor(rect[0] + p0["left"] + (pick[0] + 0.5) * z0)
        sy = math.floor(rect[1] + p0["top"] + (pick[1] + 0.5) * z0)
        builder = ActionBuilder(self.d)
        builder.pointer_action.move_to_location(sx, sy)
        builder.perform()
        p1 = self.wait("the readout of the pixel under the pointer", lambda: (lambda p: p if p["x"] is not None else None)(probe()), 10)

        def same_pixel(p, label):
            self.check((p["x"], p["y"]) == pick, f"{label}: the pointer at ({sx}, {sy}) reads pixel ({p['x']}, {p['y']}), not {pick}")
            self.check(p["a"] == pa(*pick) and p["b"] == pb(*pick),
                       f"{label}: the readout at {pick} gives A {p['a']} and B {p['b']}; the PNGs hold {pa(*pick)} and {pb(*pick)}")
            self.check(p["diff"] == [abs(u - v) for u, v in zip(pa(*pick), pb(*pick))], f"{label}: |A-B| reads {p['diff']}")
        same_pixel(p1, "at the fit")
        line = self.el("compare-readout").text
        self.check(" ".join(str(v) for v in pa(*pick)) in " ".join(line.split()), f"the readout line does not show A's values: {line!r}")
        # The wheel zooms about the pointer: the same pixel stays under it.
        ActionChains(self.d).scroll_from_origin(ScrollOrigin.from_viewport(sx, sy), 0, -300).perform()
        p2 = self.wait("the wheel's zoom", lambda: (lambda p: p if p["zoom"] > z0 else None)(probe()), 10)
        self.check(p2["zoom"] > 1 and not p2["fitted"], f"the wheel did not zoom in: {p2}")
        same_pixel(p2, f"zoomed {p2['zoom']:.2f}x by the wheel")
        zoomed = self.canvas(view)
        self.check(zoomed != hashes["a"], "the viewer's picture did not change with the wheel")
        for _ in range(6):
            if probe()["zoom"] >= 64:
                break
            press("+", "+ to zoom in", lambda p, z=probe()["zoom"]: p["zoom"] > z)
        p3 = probe()
        self.check(p3["zoom"] == 64, f"+ zoomed no further than {p3['zoom']}x, not to 64x")
        same_pixel(p3, f"zoomed {p3['zoom']:.0f}x by +")
        # A drag pans by as many CSS pixels.
        left = p3["left"]
        self.drag("canvas-compare", 40, 0)
        p4 = self.wait("the drag's pan", lambda: (lambda p: p if abs(p["left"] - left - 40) < 1e-6 else None)(probe()), 10)
        self.check(abs(p4["top"] - p3["top"]) < 1e-6 and p4["zoom"] == p3["zoom"], f"a level drag moved more than the x origin: {p3} -> {p4}")
        press("0", "0 to fit again", lambda p: p["fitted"] and p["zoom"] == z0 and p["left"] == p0["left"] and p["top"] == p0["top"])
        self.check(self.canvas(view) == hashes["a"], "after 0 the viewer does not show A as it did at the fit")
        builder = ActionBuilder(self.d)
        builder.pointer_action.move_to_location(sx, sy)
        builder.perform()
        same_pixel(self.wait("the readout after the fit", lambda: (lambda p: p if p["x"] is not None else None)(probe()), 10), "fitted again")
        log(f"  compare: the viewer flips A/B/difference by key; pixel {pick} reads A {pa(*pick)} B {pb(*pick)} as the CLI's PNGs "
            f"at {z0}x, {p2['zoom']:.2f}x (wheel) and {p3['zoom']:.0f}x (+); drag and 0 work ({len(differ)} pixels differ)")

    def downloaded(self, button, name):
        """Clicks `button` and waits for the file `name` in the downloads folder: its path."""
        downloads = os.path.join(self.work, "downloads")
        os.makedirs(downloads, exist_ok=True)
        self.d.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        path = os.path.join(downloads, name)
        if os.path.exists(path):
            os.remove(path)
        self.el(button).click()
        self.wait(f"the download of {name}", lambda: os.path.exists(path) and not os.path.exists(path + ".crdownload"), 60)
        # The file is complete once its size stops changing.
        size = -1
        while size != os.path.getsize(path):
            size = os.path.getsize(path)
            time.sleep(0.2)
        return path

    def field(self, id_):
        return self.el(id_).get_attribute("value")

    def files(self):
        """Save PNG gives exactly what `glint fractal -o` writes (and re-renders byte for byte from
        its own record), Save .kfr the view's location; a .kfr picked in the file input, a Glint PNG
        dropped on the view and `--center ... --zoom ...` pasted into the centre field each show
        their view; what is not a location is one line in the message bar."""
        view = "fractal"
        self.tab(view)
        args = ["mandelbrot", "--size", "96x60", "--center", "-0.74364,0.13182", "--zoom", "600", "--iterations", "500",
                "--palette", "rainbow", "--smooth"]
        self.go(view, args)
        saved = self.downloaded("fractal-save-png", "mandelbrot.png")
        with open(saved, "rb") as f:
            page_bytes = f.read()
        cli = os.path.join(self.work, "save-cli.png")
        self.cli("fractal", *args, "-o", cli, "--device", self.device, "-q")
        with open(cli, "rb") as f:
            self.check(page_bytes == f.read(), f"Save PNG is not the file `glint fractal {' '.join(args)}` writes")
        again = os.path.join(self.work, "save-again.png")
        self.cli("fractal", "--location", saved, "-o", again, "--device", self.device, "-q")
        with open(again, "rb") as f:
            self.check(page_bytes == f.read(), "glint fractal --location SAVED.png does not write SAVED.png again")
        log(f"  fractal: Save PNG ({len(page_bytes)} bytes) equals glint fractal's file, and --location re-renders it byte for byte")
        kfr = self.downloaded("fractal-save-kfr", "mandelbrot.kfr")
        with open(kfr) as f:
            kfr_text = f.read()
        self.check("Re: -0.74364" in kfr_text and "Zoom: 1200" in kfr_text and "Iterations: 500" in kfr_text,
                   f"Save .kfr wrote {kfr_text!r}")
        # A .kfr picked in the file input: its centre, zoom (half KF's) and count; the rest stays.
        path = os.path.join(self.work, "elsewhere.kfr")
        with open(path, "w", newline="") as f:
            f.write("Re: -1.2506600000000000001\r\nIm: 0.02012\r\nZoom: 2e3\r\nIterations: 900\r\n")
        n = self.current(view)
        self.el("fractal-open").send_keys(path)
        self.finished(view, n)
        got = self.args(view)
        want = ["mandelbrot", "--size", "96x60", "--center", "-1.2506600000000000001,0.02012", "--zoom", "1e3", "--iterations", "900",
                "--palette", "rainbow", "--smooth"]
        self.check(got == want, f"the .kfr's view is {got}, not {want}")
        self.check(self.field("fractal-center") == "-1.2506600000000000001,0.02012" and self.field("fractal-zoom") == "1e3",
                   f"the fields show {self.field('fractal-center')} and {self.field('fractal-zoom')}")
        # The saved PNG dropped on the view: back to the saved view.
        n = self.current(view)
        self.d.execute_script("""
            const [b64, stage] = arguments;
            const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
            const dt = new DataTransfer();
            dt.items.add(new File([bytes], "mandelbrot.png", {type: "image/png"}));
            stage.dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
        """, base64.b64encode(page_bytes).decode(), self.el("stage-fractal"))
        self.finished(view, n)
        got = self.args(view)
        self.check(got == args, f"the dropped PNG's view is {got}, not {args}")
        # Copy's form pasted into the centre field.
        n = self.current(view)
        self.paste("fractal-center", "--center -0.1528,1.0397 --zoom 25 --iterations 300")
        self.finished(view, n)
        got = self.args(view)
        self.check(got[3:9] == ["--center", "-0.1528,1.0397", "--zoom", "25", "--iterations", "300"], f"the pasted view is {got}")
        self.check(self.field("fractal-center") == "-0.1528,1.0397" and self.field("fractal-zoom") == "25",
                   f"after the paste the fields show {self.field('fractal-center')} and {self.field('fractal-zoom')}")
        # A bare centre pasted: the view moves there at once, at its zoom.
        n = self.current(view)
        self.paste("fractal-center", "-0.1,0.9")
        self.finished(view, n)
        got = self.args(view)
        self.check(got[3:7] == ["--center", "-0.1,0.9", "--zoom", "25"], f"the pasted centre gave {got}")
        # Typed, then Go: the same reader.
        n = self.current(view)
        box = self.el("fractal-center")
        box.clear()
        box.send_keys("--center -0.75,0.1 --zoom 3", Keys.ENTER)
        self.finished(view, n)
        got = self.args(view)
        self.check(got[3:7] == ["--center", "-0.75,0.1", "--zoom", "3"], f"the typed location gave {got}")
        # Not a location: one line in the message bar, the view unchanged.
        self.paste("fractal-center", "the seahorse valley, roughly")
        self.expected_errors += 1
        shown = self.wait("the location's message", lambda: self.js(
            "const m = [...document.querySelectorAll('#messages .message')].map((e) => e.textContent);"
            "return m.find((t) => t.startsWith('location (pasted text)')) || null;"), 30)
        self.check("\n" not in shown.strip(), f"the location's message is not one line: {shown!r}")
        self.check(self.args(view) == got, "a refused location changed the view")
        log(f"  fractal: .kfr picked, PNG dropped and options pasted each show their view; refused: {shown.rstrip('×').strip()}")

    def paste(self, id_, text):
        """A paste of `text` into the input `id_`, as the browser delivers one."""
        self.d.execute_script("""
            const [el, text] = arguments;
            const dt = new DataTransfer();
            dt.setData("text/plain", text);
            el.focus();
            el.dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
        """, self.el(id_), text)

    def error_bar(self):
        """A view the command line refuses: the message shows in the bar, and the page goes on."""
        self.tab("fractal")
        n = self.current("fractal")
        self.js("location.hash = arguments[0]", "fractal=" + urllib.parse.quote("mandelbrot --size 320x200 --iterations 0"))
        self.wait("the error", lambda: self.current("fractal") > n and self.g("requestError('fractal')"), 30)
        self.expected_errors += 1
        shown = self.wait("the message bar", lambda: self.js(
            "const m = document.querySelector('#messages .message'); return m && m.offsetParent !== null ? m.textContent : null;"), 10)
        self.check("--iterations" in shown, f"the message bar does not say what was wrong: {shown!r}")
        # A size over the limits in a link is named as such, not as a form it has.
        self.js("location.hash = arguments[0]", "fractal=" + urllib.parse.quote("mandelbrot --size 100000x100000"))
        self.expected_errors += 1
        limit = self.wait("the size's message", lambda: self.js(
            "const m = [...document.querySelectorAll('#messages .message')].map((e) => e.textContent);"
            "return m.find((t) => t.includes('100000x100000')) || null;"), 10)
        self.check("over the limit of 32768 pixels a side" in limit, f"the message for a size over the limits: {limit!r}")
        self.go("fractal", ["mandelbrot", "--size", "320x200"])
        log(f"  errors: shown in the message bar: {shown.rstrip('×').strip()}")


# The checks in the order they run; --only picks some.
CASES = ["fractal", "files", "rtow", "keys", "resolution", "mist", "pulse", "iso", "compare", "links", "error_bar"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("devices", nargs="*", default=["cpu", "opencl"], help="the server's --device, one run each (default: cpu opencl)")
    parser.add_argument("--glint", default=os.environ.get("GLINT", ".build/debug/glint"))
    parser.add_argument("--out", default=os.environ.get("GLINT_BROWSER_OUT", "docs/images/serve"))
    parser.add_argument("--only", default=None, help=f"comma-separated checks to run (of {','.join(CASES)}; default: all)")
    opts = parser.parse_args()
    only = opts.only.split(",") if opts.only else None
    if only and any(name not in CASES for name in only):
        print(f"error: --only takes {', '.join(CASES)}", file=sys.stderr)
        return 2
    glint = os.path.abspath(opts.glint)
    if not os.access(glint, os.X_OK):
        print(f"error: no glint binary at {glint} (build it, or give --glint / GLINT)", file=sys.stderr)
        return 2
    for tool in ("/usr/bin/chromedriver",):
        if not os.access(tool, os.X_OK):
            print(f"error: {tool} is missing (apt-get install chromium chromium-driver)", file=sys.stderr)
            return 2
    os.makedirs(opts.out, exist_ok=True)
    latency_file = os.path.join(opts.out, "serve-latency.json")
    results = {}
    if os.path.exists(latency_file):
        try:
            with open(latency_file) as f:
                results = json.load(f).get("devices", {})
        except (OSError, ValueError):
            results = {}
    failed = None
    for device in opts.devices:
        log(f"{device}:")
        server = driver = None
        with tempfile.TemporaryDirectory(prefix="glint-browser-") as work:
            try:
                server = Server(glint, device)
                log(f"  glint serve at {server.url}")
                driver = start_browser()
                test = PageTest(driver, server, glint, device, work, opts.out, only)
                test.run()
                results[device] = {"glint": os.path.relpath(glint), "version": test.version,
                                   "window": f"{WINDOW[0]}x{WINDOW[1]}", "browser": driver.capabilities.get("browserVersion"),
                                   "views": test.latency, "server_problems": test.problems}
                log(f"  {device}: every check passed")
            except Failure as e:
                failed = str(e)
            except WebDriverException as e:
                failed = f"{device}: the browser failed: {e.msg or e}"
            except Exception as e:
                failed = f"{device}: the test broke: {type(e).__name__}: {e}"
            finally:
                if driver is not None:
                    stop_browser(driver)
                if server is not None:
                    server.stop()
        if failed:
            break
    if results:
        with open(latency_file + ".tmp", "w") as f:
            json.dump({"about": "page-side latency per view (ms from sending the request to the frame's arrival, "
                                "median of a few) beside the server's wall time; scripts/ci/test-browser.py",
                       "devices": results}, f, indent=2)
            f.write("\n")
        os.replace(latency_file + ".tmp", latency_file)
    if failed:
        print(f"error: {failed}", file=sys.stderr)
        return 1
    log(f"all passed; screenshots and {latency_file} in {opts.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
