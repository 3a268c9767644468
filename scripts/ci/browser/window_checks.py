"""Checks of views sized to the window (device pixel ratios, resize, resolution, the half-size pass)
and of every view's link."""
import base64
import os
import statistics
import urllib.parse

from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser.harness import FIXED_FRACTAL, log


class WindowChecks:
    """Checks of window-sized views and links (mixed into the lane's Page)."""

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
