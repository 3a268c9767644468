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
import json
import os
import sys
import tempfile
import urllib.parse

from selenium.common.exceptions import WebDriverException

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser.harness import WINDOW, RENDER_S, Failure, log, Server, start_browser, stop_browser  # noqa: E402
from browser.page import Page  # noqa: E402
from browser.fractal_checks import FractalChecks  # noqa: E402
from browser.view_checks import ViewChecks  # noqa: E402
from browser.window_checks import WindowChecks  # noqa: E402


class PageTest(Page, FractalChecks, ViewChecks, WindowChecks):
    """Every check, in the order CASES runs them."""

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
