// The ray tracer: a command line of `glint rtow`, orbited, dollied and rolled with the pointer.

import { $, cliCommand, copyText, linkSize, now, onValidChange, readOptions, shellWord, short, throttledSend } from "./util.js";
import { autoSizing, drawFrame, parseSizeOrAuto, pictureView, pointerAt } from "./canvas.js";
import { request, setHash } from "./conn.js";

const RTOW_DEFAULTS = { vfov: 20, aperture: 0.1, focus: 10 };

export const rtowView = {
  ...pictureView(),
  ...autoSizing,
  // At auto, at most 2 megapixels: the default 50 samples a pixel then stay within the server's
  // render timeout on a CPU (about 30 s at 3.5 M samples/s).
  autoPixelCap: 1 << 21,
  scene: "ch10",
  spp: 50,
  size: { w: 450, h: 300 },  // with autoSize, the stage's (taken before each render)
  seed: 0,
  lon: 0, lat: 0, roll: 0,
  distanceSteps: 0,        // wheel notches: each moves the eye by 1.1 (out) or 1/1.1 (in)
  distances: [],           // the --distance factors (text), from the notches or a link
  vfov: RTOW_DEFAULTS.vfov, aperture: RTOW_DEFAULTS.aperture, focus: RTOW_DEFAULTS.focus,
  extra: [],
  drag: null,
  sendTimer: null, lastSent: 0,

  init() {
    this.canvas = $("canvas-rtow");
    const c = this.canvas;
    c.addEventListener("pointerdown", (e) => {
      c.setPointerCapture(e.pointerId);
      this.drag = { ...pointerAt(c, e), roll: e.shiftKey };
      e.preventDefault();
    });
    c.addEventListener("pointermove", (e) => {
      if (!this.drag) return;
      const p = pointerAt(c, e);
      const dx = p.x - this.drag.x, dy = p.y - this.drag.y;
      if (dx === 0 && dy === 0) return;
      this.drag.x = p.x;
      this.drag.y = p.y;
      if (this.drag.roll || e.shiftKey) {
        this.roll = Math.max(-63, Math.min(63, this.roll + dx * 0.25));
      } else {
        // A drag across the picture's width turns the viewer half way round.
        this.lon = wrapDegrees(this.lon - dx * 180 / c.cssW);
        this.lat = Math.max(-89, Math.min(89, this.lat + dy * 90 / c.cssH));
      }
      this.send(false);
    });
    const up = () => { if (this.drag) { this.drag = null; this.send(true); } };
    c.addEventListener("pointerup", up);
    c.addEventListener("pointercancel", up);
    c.addEventListener("wheel", (e) => {
      e.preventDefault();
      const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
      this.wheelRest = (this.wheelRest || 0) + Math.round(e.deltaY * unit);
      const steps = Math.trunc(this.wheelRest / 100);
      if (steps === 0) return;
      this.wheelRest -= steps * 100;
      this.dolly(steps);
      this.send(false);
    }, { passive: false });
    $("rtow-scene").onchange = (e) => { this.scene = e.target.value; this.send(true); };
    $("rtow-spp").onchange = (e) => { this.spp = parseInt(e.target.value, 10); this.send(true); };
    const seed = (text) => (/^\d{1,20}$/.test(text.trim()) ? text.trim() : null);
    onValidChange("rtow-seed", seed, "seed: a whole number from 0", () => this.seed, (n) => { this.seed = n; this.send(true); });
    onValidChange("rtow-size", parseSizeOrAuto, "size: auto (the window's), or WxH, e.g. 450x300", () => this.sizeText(), (s) => {
      this.takeSize(s);
      this.send(true);
    });
    const slider = (id, key, out, suffix = "") => {
      $(id).addEventListener("input", (e) => {
        this[key] = parseFloat(e.target.value);
        $(out).textContent = short(this[key], 2) + suffix;
        this.send(false);
      });
      $(id).addEventListener("change", () => this.send(true));
    };
    slider("rtow-vfov", "vfov", "rtow-vfov-value", "°");
    slider("rtow-aperture", "aperture", "rtow-aperture-value");
    slider("rtow-focus", "focus", "rtow-focus-value");
    $("rtow-reset").onclick = () => {
      Object.assign(this, { lon: 0, lat: 0, roll: 0, distanceSteps: 0, distances: [], ...RTOW_DEFAULTS });
      this.send(true);
    };
    $("rtow-copy-cli").onclick = () => copyText($("rtow-cli").value);
    this.syncControls();
  },

  /** Moves the eye `steps` wheel notches farther (closer when negative). */
  dolly(steps) {
    this.distanceSteps = Math.max(-60, Math.min(60, this.distanceSteps + steps));
    this.distances = distanceFactors(this.distanceSteps);
  },

  /** Turns the viewer `dLon` degrees round and `dLat` up (the arrow keys). */
  orbit(dLon, dLat) {
    this.lon = wrapDegrees(this.lon + dLon);
    this.lat = Math.max(-89, Math.min(89, this.lat + dLat));
  },

  args() {
    const a = ["--scene", this.scene, "--size", `${this.size.w}x${this.size.h}`, "--spp", String(this.spp)];
    if (String(this.seed) !== "0") a.push("--seed", String(this.seed));
    if (this.vfov !== RTOW_DEFAULTS.vfov) a.push("--vfov", short(this.vfov, 2));
    if (this.aperture !== RTOW_DEFAULTS.aperture) a.push("--aperture", short(this.aperture, 2));
    if (this.focus !== RTOW_DEFAULTS.focus) a.push("--focus-dist", short(this.focus, 2));
    const lon = short(this.lon, 2), lat = short(this.lat, 2);
    if (lon !== "0" || lat !== "0") a.push("--orbit", `${lon},${lat}`);
    for (const f of this.distances) a.push("--distance", f);
    if (short(this.roll, 2) !== "0") a.push("--roll", short(this.roll, 2));
    return a.concat(this.extra);
  },

  send(immediately) { throttledSend(this, 120, immediately); },

  sendNow(settles = true) {
    this.lastSent = now();
    if (this.refreshSize()) this.syncControls();
    const args = this.args();
    request("rtow", { type: "render", workload: "rtow", args, preview: true }, { settles });
    setHash("rtow", args);
    $("rtow-progress").value = 0;
  },

  showFrame(record, blob, req) {
    drawFrame(this, record, blob, req, false, this.size);
    if (record.spp !== undefined && record.targetSpp) {
      $("rtow-progress").value = record.spp / record.targetSpp;
    }
    if (record.samplesPerSecond !== undefined) {
      $("rtow-rate").textContent = `${record.spp}/${record.targetSpp} samples per pixel · ${rate(record.samplesPerSecond)} samples/s`;
    }
    if (record.command) $("rtow-cli").value = cliCommand(record.command, "view.png");
  },

  onDone() { $("rtow-progress").value = 1; },

  syncControls() {
    $("rtow-scene").value = this.scene;
    if (![...$("rtow-spp").options].some((o) => o.value === String(this.spp))) {
      $("rtow-spp").add(new Option(String(this.spp)));
    }
    $("rtow-spp").value = String(this.spp);
    $("rtow-size").value = this.sizeText();
    $("rtow-seed").value = this.seed;
    $("rtow-vfov").value = this.vfov;
    $("rtow-vfov-value").textContent = short(this.vfov, 2) + "°";
    $("rtow-aperture").value = this.aperture;
    $("rtow-aperture-value").textContent = short(this.aperture, 2);
    $("rtow-focus").value = this.focus;
    $("rtow-focus-value").textContent = short(this.focus, 2);
    const product = this.distances.reduce((p, f) => p * parseFloat(f), 1);
    $("rtow-gestures").textContent = `orbit ${short(this.lon, 2)},${short(this.lat, 2)} · distance ×${short(product, 3)} · roll ${short(this.roll, 2)}°`;
    $("rtow-cli").value = cliCommand(["glint", "rtow", ...this.args()].map(shellWord).join(" "), "view.png");
  },

  fromArgs(words) {
    let size = null;
    const v = { scene: "ch10", spp: 50, seed: 0, lon: 0, lat: 0, roll: 0,
      distanceSteps: 0, distances: [], ...RTOW_DEFAULTS };
    v.extra = readOptions(words, (w, value) => {
      const num = () => {
        const x = Number(value());
        if (!Number.isFinite(x)) throw new Error(`${w}: a number`);
        return x;
      };
      switch (w) {
      case "--scene": v.scene = value(); return true;
      case "--spp": v.spp = parseInt(value(), 10); return true;
      case "--size": size = linkSize(value()); return true;
      case "--seed": v.seed = value(); return true;
      case "--vfov": v.vfov = num(); return true;
      case "--aperture": v.aperture = num(); return true;
      case "--focus-dist": v.focus = num(); return true;
      case "--roll": v.roll = num(); return true;
      case "--orbit": {
        const p = value().split(",").map(Number);
        if (p.length !== 2 || !p.every(Number.isFinite)) throw new Error("--orbit: LON,LAT");
        [v.lon, v.lat] = p;
        return true;
      }
      case "--distance": {
        const f = value();
        if (!(Number(f) > 0)) throw new Error("--distance: a factor above 0");
        v.distances.push(f);
        return true;
      }
      default:
        return false;
      }
    });
    // Wheel notches go on from the product of the factors given.
    const product = v.distances.reduce((p, f) => p * Number(f), 1);
    v.distanceSteps = Math.round(Math.log(product) / Math.log(1.1));
    Object.assign(this, v);
    this.takeLinkSize(size);
  },
};

function wrapDegrees(x) {
  const r = ((x % 360) + 540) % 360 - 180;
  return r === -180 ? 180 : r;
}

/**
 * The --distance factors for `steps` wheel notches (1.1 each): the product split into equal
 * factors within the clamp of 0.314...2.718 that each step of the command line applies.
 */
function distanceFactors(steps) {
  if (steps === 0) return [];
  const n = Math.ceil(Math.abs(steps) / 10);           // 1.1^10 = 2.59 stays within the clamp
  const f = Math.pow(1.1, steps / n);
  return Array(n).fill(short(f, 4));
}

function rate(x) {
  if (x >= 1e6) return short(x / 1e6, 2) + " M";
  if (x >= 1e3) return short(x / 1e3, 1) + " k";
  return short(x, 0) + " ";
}
