"""The fractal view's checks: gestures, fixed and deep views against the command line, iterations auto,
the locators, the zoom video, and saving and opening locations."""
import base64
import os
import shlex
import statistics
import subprocess
import tarfile
import time
import urllib.parse

from selenium.webdriver import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from browser.harness import RENDER_S, AUTO_CENTER, FIXED_FRACTAL, DEEP_CENTER, log


class FractalChecks:
    """Checks of the fractal view (mixed into the lane's Page)."""

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
