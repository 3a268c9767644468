"""The browser lane's parts that are not checks: its constants, `glint serve` on a free port, and
headless Chromium (scripts/ci/test-browser.py)."""
import importlib.util
import os
import queue
import re
import secrets
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

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
                                                                            "..", "..", "tools", "png-strip.py"))
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
