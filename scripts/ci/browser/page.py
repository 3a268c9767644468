"""The page under test: access to its state, real pointer input, the command line to compare with, and
latency figures (the checks build on these)."""
import base64
import json
import math
import os
import statistics
import subprocess
import time
import urllib.parse

from selenium.common.exceptions import WebDriverException
from selenium.webdriver import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By

from browser.harness import RENDER_S, Failure, log


class Page:
    """A browser on one server's page, and the command line beside it."""

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
