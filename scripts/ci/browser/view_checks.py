"""The other views' checks: the ray tracer, the keys and history, the misty window, the pulse, iso and
the compare viewer."""
import math
import os
import shlex
import statistics
import time
from decimal import Decimal

from selenium.webdriver import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser.harness import log, png_pixels


class ViewChecks:
    """Checks of the ray tracer, keys, mist, pulse, iso and compare (mixed into the lane's Page)."""

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
        self.live_frames(view, rid, len(self.g(f"history('{view}')")) + 5)
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
