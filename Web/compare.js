// Compare: one job on two devices, their pictures, the difference and the verdict against the
// workload's tolerance (POST /api/compare). The pictures are looked at the way an image viewer
// shows two renders: one large viewer that flips between A, B and their difference (with a gain),
// zooms down to single pixels and reads the values of the pixel under the pointer.

import { $, fromBase64, notify, now, shellWord, short, splitWords } from "./util.js";
import { failure, postJSON, setHash, showStatus } from "./conn.js";
import { state } from "./state.js";
import { fractalView } from "./fractal.js";
import { rtowView } from "./rtow.js";
import { pulseView } from "./pulse.js";

/** The difference's gains: a difference of a level or two is black at ×1 and plain at ×64. */
const GAINS = [1, 4, 16, 64];
/** The most CSS pixels one picture pixel may cover. */
const ZOOM_MAX = 64;
/** From this zoom on, every pixel shown carries its values as text. */
const LABEL_ZOOM = 48;

export const compareView = {
  live: false,
  status: "",
  running: false,
  setLive() {},
  showFrame() {},

  sides: null,        // {a, b, heat}: each picture decoded at its own size, {w, h, data, canvas}
  diffs: new Map(),   // gain -> |A−B| × gain as {w, h, data, canvas}, made when first shown
  shown: "a",         // what the viewer shows: "a", "b" or "diff"
  gain: 16,
  heat: false,        // the difference as the server's heat map instead of |A−B| × gain
  zoom: 1,            // CSS pixels per picture pixel
  ox: 0,              // where the picture's top left corner is in the viewer, CSS pixels
  oy: 0,
  fitted: true,       // the view is the fit (a resize fits again) until zoomed or panned
  cssW: 0,
  cssH: 0,
  pointer: null,      // {x, y} in the viewer's CSS pixels while the pointer is over it
  drag: null,

  init() {
    $("compare-from").onchange = () => this.fill();
    $("compare-run").onclick = () => this.run();
    this.viewer = $("canvas-compare");
    for (const b of document.querySelectorAll("#compare-show button")) b.onclick = () => this.showSide(b.dataset.show);
    $("compare-gain").classList.toggle("idle", this.shown !== "diff");
    for (const b of document.querySelectorAll("#compare-gain button")) {
      b.onclick = () => (b.dataset.gain === "heat" ? this.setHeat(true) : this.setGain(Number(b.dataset.gain)));
    }
    $("compare-fit").onclick = () => this.fit();
    $("canvas-compare-a").onclick = () => this.showSide("a");
    $("canvas-compare-b").onclick = () => this.showSide("b");
    $("canvas-compare-diff").onclick = () => this.setHeat(true);
    this.gestures();
    // The viewer's box changes with the window and when the view is first shown.
    new ResizeObserver(() => this.resize()).observe($("compare-viewer"));
    this.readout();
  },

  /** The job's text from the chosen view. */
  fill() {
    const from = $("compare-from").value;
    if (from === "fractal") $("compare-args").value = ["fractal", ...fractalView.args()].map(shellWord).join(" ");
    else if (from === "rtow") $("compare-args").value = ["rtow", ...rtowView.args()].map(shellWord).join(" ");
    else if (from === "pulse") $("compare-args").value = ["pulse", ...pulseView.args(), "--frames", "30"].map(shellWord).join(" ");
  },

  /** The link: the job's words, and the two devices. */
  link() {
    const words = splitWords($("compare-args").value);
    // One string, each word quoted as a shell would read it back (splitWords, when opened).
    return words.length ? { args: words.map(shellWord).join(" "), more: [["a", $("compare-a").value], ["b", $("compare-b").value]] }
      : { args: null };
  },

  /** Takes a link's job and devices (each one the server lists) into the fields. */
  fromLink(words, a, b) {
    for (const [id, value] of [["compare-a", a], ["compare-b", b]]) {
      if (value === undefined || value === null) continue;
      if (![...$(id).options].some((o) => o.value === value)) throw new Error(`device ${value}: not one of the server's (${[...$(id).options].map((o) => o.value).join(", ")})`);
      $(id).value = value;
    }
    $("compare-from").value = "custom";
    $("compare-args").value = words.map(shellWord).join(" ");
  },

  async run() {
    if (this.running) return;
    const words = splitWords($("compare-args").value);
    if (words.length === 0) { notify("compare: give a workload and its options"); return; }
    const body = { workload: words[0], args: words.slice(1), a: $("compare-a").value, b: $("compare-b").value };
    const l = this.link();
    setHash("compare", l.args, true, l.more);
    this.running = true;
    $("compare-run").disabled = true;
    $("compare-verdict").textContent = `running ${body.workload} on ${body.a} and ${body.b}…`;
    $("compare-verdict").className = "verdict";
    const t0 = now();
    try {
      const res = await postJSON("/api/compare", body);
      if (!res.ok) throw new Error(await failure(res));
      const result = await res.json();
      const ms = now() - t0;
      await this.show(result, body, ms);
      state.lastCompare = { ms: Math.round(ms), request: body, result: stripImages(result) };
      this.status = `compare ${body.workload}: ${body.a} vs ${body.b} · ${short(ms, 0)} ms`;
    } catch (e) {
      notify("compare: " + e.message);
      $("compare-verdict").textContent = "compare failed: " + e.message;
      $("compare-verdict").className = "verdict fail";
      state.lastCompare = { error: e.message, request: body };
      this.status = "compare: failed";
    } finally {
      this.running = false;
      $("compare-run").disabled = false;
      showStatus();
    }
  },

  async show(r, body, ms) {
    const [a, b, heat] = await Promise.all([r.a && r.a.png, r.b && r.b.png, r.diff_png].map((p) => (p ? decodeExact(p) : null)));
    if (!a || !b) throw new Error("the answer lacks a side's picture");
    const sides = [["a", a, "canvas-compare-a", "compare-a-caption"], ["b", b, "canvas-compare-b", "compare-b-caption"]];
    for (const [key, picture, canvasId, captionId] of sides) {
      const side = r[key] || {};
      thumbnail($(canvasId), picture);
      $(captionId).textContent = `${key.toUpperCase()}: ${side.device || body[key]}` +
        (typeof side.wall_ms === "number" ? ` · ${short(side.wall_ms, 1)} ms` : "") +
        (side.kernel_ms > 0 ? ` (kernels ${short(side.kernel_ms, 1)} ms)` : "");
    }
    thumbnail($("canvas-compare-diff"), heat);
    this.setSides({ a, b, heat });
    $("compare-verdict").textContent = (r.passed ? "within tolerance" : "OUTSIDE tolerance") +
      (r.tolerance ? ` (${r.tolerance})` : "") + ` · ${short(ms, 0)} ms in all`;
    $("compare-verdict").className = "verdict " + (r.passed ? "pass" : "fail");
    this.table(r);
  },

  /** The figures: the difference, the speed-up and each criterion of the tolerance. */
  table(r) {
    const t = $("compare-table");
    t.textContent = "";
    const row = (cells, head = false) => {
      const tr = t.insertRow();
      for (const c of cells) {
        const cell = document.createElement(head ? "th" : "td");
        cell.textContent = c;
        tr.appendChild(cell);
      }
    };
    row(["largest difference", "mean difference", "PSNR dB", "pixels over 1 level", "speed-up of B over A"], true);
    row([short(r.max_abs, 3), short(r.mean_abs, 4), r.psnr_db === null || r.psnr_db === undefined ? "inf" : short(r.psnr_db, 2),
      String(r.pixels_over_threshold), r.speedup ? short(r.speedup, 2) + "x" : "–"]);
    for (const c of r.criteria || []) {
      const tr = t.insertRow();
      const cell = tr.insertCell();
      cell.colSpan = 5;
      cell.style.textAlign = "left";
      cell.textContent = (c.passed ? "ok   " : "FAIL ") + c.text;
    }
    if (r.command) {
      const cell = t.insertRow().insertCell();
      cell.colSpan = 5;
      cell.style.textAlign = "left";
      cell.className = "mono";
      cell.textContent = r.command.replace(/ -o view\.png$/, "");
    }
  },

  // MARK: The viewer

  /** New pictures: a comparison of the same size keeps the zoom and place, so that two runs can
   *  be looked at in the same spot. */
  setSides(sides) {
    const old = this.sides;
    const same = old && old.a.w === sides.a.w && old.a.h === sides.a.h && old.b.w === sides.b.w && old.b.h === sides.b.h;
    this.sides = sides;
    this.diffs.clear();
    if (sides.a.w !== sides.b.w || sides.a.h !== sides.b.h) {
      notify(`compare: A is ${sides.a.w}x${sides.a.h} and B ${sides.b.w}x${sides.b.h}; the difference covers both, magenta where one side has no pixel`, "info");
    }
    if (!same || this.fitted) this.fit(); else this.draw();
  },

  /** The size the viewer lays out: the larger of the two sides. */
  size() {
    const { a, b } = this.sides;
    return { w: Math.max(a.w, b.w), h: Math.max(a.h, b.h) };
  },

  resize() {
    const box = $("compare-viewer");
    const w = box.clientWidth, h = box.clientHeight;
    if (w === 0 || h === 0) return;   // the view is hidden
    const dpr = window.devicePixelRatio || 1;
    const c = this.viewer;
    // Whatever was in the middle of the viewer stays there.
    if (!this.fitted && this.cssW > 0) {
      this.ox += (w - this.cssW) / 2;
      this.oy += (h - this.cssH) / 2;
    }
    this.cssW = w;
    this.cssH = h;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    c.style.width = w + "px";
    c.style.height = h + "px";
    if (this.sides && this.fitted) this.fit(); else this.draw();
  },

  /** The zoom that shows the whole picture; whole numbers when it magnifies, so that every
   *  pixel is the same size on the screen. */
  fitZoom() {
    if (!this.sides || this.cssW === 0) return 1;
    const { w, h } = this.size();
    const s = Math.min(this.cssW / w, this.cssH / h);
    return s >= 1 ? Math.min(ZOOM_MAX, Math.floor(s)) : s;
  },

  fit() {
    this.fitted = true;
    if (this.sides && this.cssW > 0) {
      const { w, h } = this.size();
      this.zoom = this.fitZoom();
      this.ox = Math.floor((this.cssW - w * this.zoom) / 2);
      this.oy = Math.floor((this.cssH - h * this.zoom) / 2);
    }
    this.draw();
  },

  /** Zooms by `factor` keeping the picture's point under (px, py) where it is. */
  zoomAbout(factor, px, py) {
    if (!this.sides) return;
    const z = Math.max(Math.min(1, this.fitZoom()) / 4, Math.min(ZOOM_MAX, this.zoom * factor));
    if (z === this.zoom) return;
    const u = (px - this.ox) / this.zoom, v = (py - this.oy) / this.zoom;
    this.ox = px - u * z;
    this.oy = py - v * z;
    this.zoom = z;
    this.fitted = false;
    this.draw();
  },

  panBy(dx, dy) {
    if (!this.sides) return;
    this.ox += dx;
    this.oy += dy;
    this.fitted = false;
    this.draw();
  },

  /** Where keys zoom about: the pointer when it is over the viewer, else the viewer's middle. */
  anchor() {
    return this.pointer || { x: this.cssW / 2, y: this.cssH / 2 };
  },

  showSide(which) {
    this.shown = which;
    this.draw();
  },

  setGain(g) {
    this.gain = g;
    this.heat = false;
    this.showSide("diff");
  },

  setHeat(on) {
    this.heat = on;
    this.showSide("diff");
  },

  /** The picture the viewer shows now, {w, h, data, canvas}, or null before a comparison. */
  shownPicture() {
    if (!this.sides) return null;
    if (this.shown === "a" || this.shown === "b") return this.sides[this.shown];
    if (this.heat && this.sides.heat) return this.sides.heat;
    if (!this.diffs.has(this.gain)) this.diffs.set(this.gain, difference(this.sides.a, this.sides.b, this.gain));
    return this.diffs.get(this.gain);
  },

  draw() {
    const c = this.viewer;
    if (!c) return;
    const ctx = c.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, c.width, c.height);
    const picture = this.shownPicture();
    if (picture && this.cssW > 0) {
      const dpr = c.width / this.cssW;
      // Nearest neighbour: a zoomed pixel is a square of its own colour, never a blend.
      ctx.imageSmoothingEnabled = false;
      ctx.setTransform(dpr * this.zoom, 0, 0, dpr * this.zoom, dpr * this.ox, dpr * this.oy);
      ctx.drawImage(picture.canvas, 0, 0);
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      if (this.zoom >= LABEL_ZOOM) this.labels(ctx, picture, dpr);
    }
    this.syncBar();
    this.readout();
  },

  /** Each pixel in view labelled with its values (R, G, B, and A where it is not opaque); on the
   *  difference, the plain |A−B| whatever the gain. */
  labels(ctx, picture, dpr) {
    const z = this.zoom;
    const x0 = Math.max(0, Math.floor(-this.ox / z)), x1 = Math.min(picture.w, Math.ceil((this.cssW - this.ox) / z));
    const y0 = Math.max(0, Math.floor(-this.oy / z)), y1 = Math.min(picture.h, Math.ceil((this.cssH - this.oy) / z));
    const size = Math.min(14, Math.floor(z / 4.5));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = `${size}px ui-monospace, "DejaVu Sans Mono", monospace`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) {
        const values = this.labelValues(x, y);
        if (!values) continue;
        const i = (y * picture.w + x) * 4, d = picture.data;
        const light = 0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2] > 128;
        ctx.fillStyle = light ? "#000" : "#fff";
        const lines = values[3] === (this.shown === "diff" ? 0 : 255) ? values.slice(0, 3) : values;
        const cx = this.ox + (x + 0.5) * z, cy = this.oy + (y + 0.5) * z;
        lines.forEach((v, k) => ctx.fillText(String(v), cx, cy + (k - (lines.length - 1) / 2) * (size + 1)));
      }
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
  },

  labelValues(x, y) {
    const a = pixel(this.sides.a, x, y), b = pixel(this.sides.b, x, y);
    if (this.shown === "a") return a;
    if (this.shown === "b") return b;
    return a && b ? a.map((v, k) => Math.abs(v - b[k])) : null;
  },

  /** The picture pixel under the viewer's point (px, py), or null off the picture. */
  pixelAt(px, py) {
    // A point on a pixel's very edge belongs to the pixel right of (below) it, whatever rounding
    // a zoom about that point left in the origin.
    const x = Math.floor((px - this.ox) / this.zoom + 1e-9), y = Math.floor((py - this.oy) / this.zoom + 1e-9);
    const { w, h } = this.size();
    return x >= 0 && y >= 0 && x < w && y < h ? { x, y } : null;
  },

  /** What the viewer shows and the pixel under the pointer, with A's and B's values there. */
  probe() {
    const at = this.sides && this.pointer ? this.pixelAt(this.pointer.x, this.pointer.y) : null;
    const a = at ? pixel(this.sides.a, at.x, at.y) : null, b = at ? pixel(this.sides.b, at.x, at.y) : null;
    const size = this.sides ? this.size() : null;
    return {
      shown: this.shown, gain: this.heat ? "heat" : this.gain, zoom: this.sides ? this.zoom : null, fitted: this.fitted,
      width: size && size.w, height: size && size.h, left: this.ox, top: this.oy,
      x: at ? at.x : null, y: at ? at.y : null, a, b, diff: a && b ? a.map((v, k) => Math.abs(v - b[k])) : null,
    };
  },

  readout() {
    const el = $("compare-readout");
    if (!el) return;
    const p = this.probe();
    if (!this.sides) { el.textContent = "the pointer over the picture reads its pixel here"; return; }
    if (p.x === null) { el.textContent = `${p.width}x${p.height} · point at a pixel for its values`; return; }
    const rgba = (v) => (v ? v.map((n) => String(n).padStart(3)).join(" ") : "  –   –   –   –");
    el.textContent = `x ${String(p.x).padStart(4)} y ${String(p.y).padStart(4)}   A ${rgba(p.a)}   B ${rgba(p.b)}   |A−B| ${rgba(p.diff)}`;
  },

  syncBar() {
    for (const b of document.querySelectorAll("#compare-show button")) b.classList.toggle("active", b.dataset.show === this.shown);
    $("compare-gain").classList.toggle("idle", this.shown !== "diff");
    for (const b of document.querySelectorAll("#compare-gain button")) {
      b.classList.toggle("active", b.dataset.gain === "heat" ? this.heat : !this.heat && Number(b.dataset.gain) === this.gain);
    }
    $("canvas-compare-a").classList.toggle("active", this.shown === "a");
    $("canvas-compare-b").classList.toggle("active", this.shown === "b");
    $("canvas-compare-diff").classList.toggle("active", this.shown === "diff" && this.heat);
    $("compare-zoom").textContent = this.sides ? `${short(this.zoom, this.zoom < 1 ? 3 : 2)}×${this.fitted ? " (fit)" : ""}` : "";
  },

  gestures() {
    const c = this.viewer;
    const local = (e) => {
      const r = c.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    };
    c.addEventListener("pointerdown", (e) => {
      if (e.button !== 0 || !this.sides) return;
      // The view's keys act once the viewer is used, not in the job's text field.
      if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
      c.setPointerCapture(e.pointerId);
      this.drag = { id: e.pointerId, x: e.clientX, y: e.clientY };
      e.preventDefault();
    });
    c.addEventListener("pointermove", (e) => {
      this.pointer = local(e);
      const d = this.drag;
      if (d && d.id === e.pointerId && (e.clientX !== d.x || e.clientY !== d.y)) {
        const dx = e.clientX - d.x, dy = e.clientY - d.y;
        d.x = e.clientX;
        d.y = e.clientY;
        this.panBy(dx, dy);
      } else {
        this.readout();
      }
    });
    const end = (e) => { if (this.drag && this.drag.id === e.pointerId) this.drag = null; };
    c.addEventListener("pointerup", end);
    c.addEventListener("pointercancel", end);
    c.addEventListener("pointerleave", () => {
      if (this.drag) return;
      this.pointer = null;
      this.readout();
    });
    c.addEventListener("wheel", (e) => {
      if (!this.sides) return;
      e.preventDefault();
      // A notch of 100 zooms by √2 both ways; lines and pages count as many pixels.
      const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
      this.pointer = local(e);
      this.zoomAbout(Math.pow(2, -(e.deltaY * unit) / 200), this.pointer.x, this.pointer.y);
      this.readout();
    }, { passive: false });
  },

  /** The view's keys (keys.js hands them over while the view is shown); true when one of them. */
  key(k) {
    const arrows = { ArrowLeft: [1, 0], ArrowRight: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    if (k === "a" || k === "b") this.showSide(k);
    else if (k === "d") this.showSide("diff");
    else if (k === " ") this.showSide(this.shown === "a" ? "b" : "a");
    else if (k === "e" || k === "E") {
      const i = GAINS.indexOf(this.gain) + (k === "e" ? 1 : -1);
      this.setGain(GAINS[Math.max(0, Math.min(GAINS.length - 1, i))]);
    } else if (k === "h") this.setHeat(!(this.heat && this.shown === "diff"));
    else if (k === "+" || k === "=" || k === "PageUp") this.zoomAbout(2, this.anchor().x, this.anchor().y);
    else if (k === "-" || k === "PageDown") this.zoomAbout(0.5, this.anchor().x, this.anchor().y);
    else if (k === "0" || k === "Home") this.fit();
    else if (arrows[k]) this.panBy(arrows[k][0] * this.cssW / 10, arrows[k][1] * this.cssH / 10);
    else return false;
    return true;
  },
};

function stripImages(r) {
  return JSON.parse(JSON.stringify(r, (k, v) => (typeof v === "string" && v.length > 512 ? `(${v.length} characters)` : v)));
}

/** A PNG (base64) decoded to the values in the file: no colour-space conversion, no
 *  premultiplied alpha on the way. The server's pictures are opaque, so the 2D canvas's own
 *  premultiplied store loses nothing either. */
async function decodeExact(b64) {
  const blob = new Blob([fromBase64(b64)], { type: "image/png" });
  const bitmap = await createImageBitmap(blob, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.drawImage(bitmap, 0, 0);
  bitmap.close();
  return { w: canvas.width, h: canvas.height, data: ctx.getImageData(0, 0, canvas.width, canvas.height).data, canvas };
}

/** A picture's RGBA at (x, y), or null outside it. */
function pixel(p, x, y) {
  if (!p || x < 0 || y < 0 || x >= p.w || y >= p.h) return null;
  const i = (y * p.w + x) * 4;
  return [p.data[i], p.data[i + 1], p.data[i + 2], p.data[i + 3]];
}

/** |A−B| per channel times `gain`, opaque; a difference in alpha shows in every colour channel
 *  so that it is not lost on an opaque picture. */
function difference(a, b, gain) {
  const w = Math.max(a.w, b.w), h = Math.max(a.h, b.h);
  const canvas = document.createElement("canvas");
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const out = ctx.createImageData(w, h);
  const d = out.data;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 4;
      d[o + 3] = 255;
      if (x >= a.w || y >= a.h || x >= b.w || y >= b.h) {
        d[o] = 255;
        d[o + 2] = 255;
        continue;
      }
      const i = (y * a.w + x) * 4, j = (y * b.w + x) * 4;
      const da = Math.abs(a.data[i + 3] - b.data[j + 3]);
      for (let k = 0; k < 3; k++) d[o + k] = Math.min(255, Math.max(Math.abs(a.data[i + k] - b.data[j + k]), da) * gain);
    }
  }
  ctx.putImageData(out, 0, 0);
  return { w, h, data: d, canvas };
}

/** A small copy of a picture for the row under the viewer (a click shows it large). */
function thumbnail(canvas, picture) {
  const ctx = canvas.getContext("2d");
  if (!picture) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    return;
  }
  canvas.width = picture.w;
  canvas.height = picture.h;
  ctx.drawImage(picture.canvas, 0, 0);
}
