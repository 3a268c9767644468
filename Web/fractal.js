// The fractal explorer: a command line of `glint fractal` whose centre, zoom and Julia constant
// are exact decimals (decimal.js); its arithmetic, gestures and c picker are in the fractal-*.js
// modules.

import { $, cliCommand, copyText, linkSize, notify, now, onValidChange, readOptions, shellWord, throttledSend, wholeIn } from "./util.js";
import { parsePoint, parseZoom, pointText, samePoint, sameZoom, zoomExponent, zoomText } from "./decimal.js";
import { autoSizing, parseSizeOrAuto, pictureView, pointerAt, setCanvasSize } from "./canvas.js";
import { failure, postJSON, request, setHash, uploadOnPick } from "./conn.js";
import { current, lastFrame, state } from "./state.js";
import { DEFAULT_C, FORMULA_CENTERS, JULIA_TYPES, fractalLocation } from "./fractal-location.js";
import { fractalGestures } from "./fractal-gestures.js";
import { fractalInset } from "./fractal-inset.js";
import { fractalVideo } from "./fractal-video.js";
import { fractalFile } from "./fractal-file.js";

/** "auto", or a whole number of iterations within the server's limit; null otherwise. */
function iterationsIn(text) {
  return text.trim().toLowerCase() === "auto" ? "auto" : wholeIn(1, 16777216)(text);
}

export const fractalView = {
  ...pictureView(),
  ...autoSizing,
  formula: "mandelbrot",
  palette: "tutorial",
  smooth: false,
  colouring: "count",       // --color: count, de or slope
  iterations: "auto",       // a count, or "auto": the server finds the count each view needs
  chosen: null,            // the count "auto" found for the picture shown
  ss: 1,
  size: { w: 640, h: 400 },  // with autoSize, the stage's (taken before each render)
  center: parsePoint(FORMULA_CENTERS.mandelbrot),
  zoom: { m: 1n, e: 0 },
  c: parsePoint(DEFAULT_C),
  texture: null,           // upload:ID for image-julia
  extra: [],               // options from a link that the controls do not show
  // The gestures since the page opened as one screen transform, to show the last picture
  // moved with the pointer until the new one comes (display only).
  shown: { s: 1, tx: 0, ty: 0 },
  bitmap: null, bitmapTransform: null,
  pointers: new Map(),
  sendTimer: null, lastSent: 0,

  init() {
    this.canvas = $("canvas-fractal");
    const c = this.canvas;
    c.addEventListener("pointerdown", (e) => this.pointerDown(e));
    c.addEventListener("pointermove", (e) => this.pointerMove(e));
    c.addEventListener("pointerup", (e) => this.pointerUp(e));
    c.addEventListener("pointercancel", (e) => this.pointerUp(e));
    c.addEventListener("contextmenu", (e) => e.preventDefault());
    c.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
    c.addEventListener("dblclick", (e) => {
      const p = pointerAt(c, e);
      this.zoomAt(e.shiftKey ? 1n : 2n, e.shiftKey ? 2n : 1n, p.x, p.y);
      this.send(true);
    });
    $("fractal-formula").onchange = (e) => {
      this.formula = e.target.value;
      this.center = parsePoint(FORMULA_CENTERS[this.formula]);
      this.zoom = { m: 1n, e: 0 };
      this.resetShown();
      this.send(true);
    };
    $("fractal-palette").onchange = (e) => { this.palette = e.target.value; this.send(true); this.inset.stale = true; this.showInset(); };
    $("fractal-smooth").onchange = (e) => { this.smooth = e.target.checked; this.send(true); };
    $("fractal-color").onchange = (e) => { this.colouring = e.target.value; this.send(true); };
    $("fractal-locate-minibrot").onclick = () => this.locate("minibrot");
    $("fractal-locate-misiurewicz").onclick = () => this.locate("misiurewicz");
    onValidChange("fractal-iterations", iterationsIn, "iterations: auto, or a whole number from 1 to 16777216", () => this.iterations,
      (n) => { this.iterations = n; this.send(true); });
    onValidChange("fractal-ss", wholeIn(1, 16), "supersampling: 1 to 16", () => this.ss, (n) => { this.ss = n; this.send(true); });
    onValidChange("fractal-size", parseSizeOrAuto, "size: auto (the window's), or WxH, e.g. 640x400", () => this.sizeText(), (s) => {
      this.takeSize(s);
      this.resetShown();
      this.send(true);
    });
    uploadOnPick("fractal-texture", "texture", (u) => {
      this.texture = u.id;
      this.send(true);
    });
    $("fractal-reset").onclick = () => {
      this.center = parsePoint(FORMULA_CENTERS[this.formula]);
      this.zoom = { m: 1n, e: 0 };
      this.resetShown();
      this.send(true);
    };
    $("fractal-zoom-in").onclick = () => { this.zoomCentred(2n, 1n); this.send(true); };
    $("fractal-zoom-out").onclick = () => { this.zoomCentred(1n, 2n); this.send(true); };
    $("fractal-go").onclick = () => this.go();
    for (const id of ["fractal-center", "fractal-zoom"]) $(id).addEventListener("keydown", (e) => { if (e.key === "Enter") this.go(); });
    onValidChange("fractal-c", parsePoint, "c: RE,IM, e.g. -0.8,0.156", () => pointText(this.c), (p) => { this.c = p; this.send(true); });
    $("fractal-copy-location").onclick = () => copyText(`--center ${pointText(this.center)} --zoom ${zoomText(this.zoom)}`);
    $("fractal-copy-kfr").onclick = () => copyText($("fractal-kfr").value);
    $("fractal-copy-cli").onclick = () => copyText($("fractal-cli").value);
    $("fractal-inset").addEventListener("click", (e) => this.insetClick(e));
    this.initVideo();
    this.initFile();
    this.syncControls();
  },

  /** Asks the server for the nearest minibrot or Misiurewicz point (glint locate) and goes there. */
  async locate(feature) {
    const args = this.args();
    try {
      const res = await postJSON("/api/locate", { workload: "fractal", args, feature });
      if (!res.ok) throw new Error(await failure(res));
      const found = await res.json();
      const p = parsePoint(found.center), z = parseZoom(found.zoom);
      if (!p || !z) throw new Error("the server's answer is not a view");
      this.center = p;
      this.zoom = z;
      if (this.iterations !== "auto" && this.iterations < found.iterations) this.iterations = found.iterations;
      notify(found.summary, "info");
      this.resetShown();
      this.send(true);
    } catch (e) {
      notify("locate " + feature + ": " + e.message);
    }
  },

  go() {
    const text = $("fractal-center").value;
    const p = parsePoint(text);
    // Other text is a location in another form (--center X,Y --zoom Z, ...): the server reads it.
    if (!p && text.trim()) { this.openText(text); return; }
    const z = parseZoom($("fractal-zoom").value);
    if (!p) { notify("centre: X,Y, e.g. -0.7435669,0.1314023"); return; }
    if (!z || zoomExponent(z) < -9) { notify("zoom: a positive decimal of at least 1e-9, e.g. 2e4"); return; }
    this.center = p;
    this.zoom = z;
    this.resetShown();
    this.send(true);
  },

  // The view's arithmetic, all exact, and its gestures.
  ...fractalLocation,
  ...fractalGestures,

  // The job

  args() {
    const a = [this.formula, "--size", `${this.size.w}x${this.size.h}`];
    if (!samePoint(this.center, parsePoint(FORMULA_CENTERS[this.formula]))) a.push("--center", pointText(this.center));
    if (!sameZoom(this.zoom, { m: 1n, e: 0 })) a.push("--zoom", zoomText(this.zoom));
    if (JULIA_TYPES.has(this.formula)) a.push("--c", pointText(this.c));
    if (this.iterations !== 128) a.push("--iterations", String(this.iterations));
    if (this.palette !== "tutorial") a.push("--palette", this.palette);
    if (this.smooth) a.push("--smooth");
    if (this.colouring !== "count") a.push("--color", this.colouring);
    if (this.ss !== 1) a.push("--ss", String(this.ss));
    if (this.formula === "image-julia" && this.texture) a.push("--texture", this.texture);
    return a.concat(this.extra);
  },

  /** Asks for the view now (`now`), or within a tenth of a second while a gesture goes on. */
  send(immediately) { throttledSend(this, 100, immediately); },

  sendNow(settles = true) {
    this.lastSent = now();
    if (this.formula === "image-julia" && !this.texture) {
      notify("image-julia needs a texture: pick a picture under the view's controls", "info");
      return;
    }
    // The window may have changed since the last view: the picture is the stage's size now.
    if (this.refreshSize()) this.syncControls();
    const args = this.args();
    request("fractal", { type: "render", workload: "fractal", args, preview: true }, { transform: { ...this.shown }, settles });
    setHash("fractal", args);
  },

  showFrame(record, blob, req) {
    setCanvasSize(this.canvas, this.size.w, this.size.h);
    this.decode(blob, (bitmap) => {
      if (current.fractal !== req.id) return;
      this.bitmap = bitmap;
      this.bitmapTransform = req.transform || null;
      this.redraw();
    });
    if (record.command) $("fractal-cli").value = cliCommand(record.command, "view.png");
    if (record.stage === "final") {
      this.chosen = record.iterations || null;
      this.showChosen();
      this.fetchLocation(req);
    }
  },

  /** What "auto" found for the picture shown, beside the iterations field. */
  showChosen() {
    const auto = this.iterations === "auto";
    $("fractal-iterations-chosen").textContent = auto && this.chosen ? `found ${this.chosen}` : "";
  },

  onDone(req) {
    const lf = lastFrame.fractal;
    if (lf && lf.id === req.id && lf.stage !== "final") this.fetchLocation(req);
  },

  async fetchLocation(req) {
    // A location records a count: the one auto found for this picture.
    const args = req.message.args.slice();
    const at = args.lastIndexOf("--iterations");
    if (at >= 0 && args[at + 1] === "auto") {
      if (!this.chosen) return;
      args[at + 1] = String(this.chosen);
    }
    try {
      const res = await postJSON("/api/location", { workload: "fractal", args });
      if (!res.ok) throw new Error(await failure(res));
      const text = await res.text();
      if (current.fractal === req.id) {
        $("fractal-kfr").value = text;
        state.locationText = text;
      }
    } catch (e) {
      notify("location: " + e.message);
    }
  },

  syncControls() {
    $("fractal-formula").value = this.formula;
    $("fractal-palette").value = this.palette;
    $("fractal-smooth").checked = this.smooth;
    $("fractal-color").value = this.colouring;
    $("fractal-iterations").value = this.iterations;
    this.showChosen();
    $("fractal-ss").value = this.ss;
    $("fractal-size").value = this.sizeText();
    $("fractal-center").value = pointText(this.center);
    $("fractal-zoom").value = zoomText(this.zoom);
    $("fractal-c").value = pointText(this.c);
    const julia = JULIA_TYPES.has(this.formula);
    $("fractal-c-box").classList.toggle("hidden", !julia);
    $("fractal-texture-row").classList.toggle("hidden", this.formula !== "image-julia");
    $("fractal-cli").value = cliCommand(["glint", "fractal", ...this.args()].map(shellWord).join(" "), "view.png");
    if (julia) this.showInset();
  },

  /** Takes a command line's options (from a link): the view they describe. */
  fromArgs(words) {
    const v = {
      formula: "mandelbrot", palette: "tutorial", smooth: false, colouring: "count", iterations: 128, ss: 1,
      center: null, zoom: { m: 1n, e: 0 }, c: parsePoint(DEFAULT_C), texture: null,
    };
    let size = null;
    v.extra = readOptions(words, (w, value) => {
      switch (w) {
      case "--center": { const p = parsePoint(value()); if (!p) throw new Error("--center: X,Y"); v.center = p; return true; }
      case "--zoom": { const z = parseZoom(value()); if (!z) throw new Error("--zoom: a positive decimal"); v.zoom = z; return true; }
      case "--c": { const p = parsePoint(value()); if (!p) throw new Error("--c: RE,IM"); v.c = p; return true; }
      // Any other value goes to the server, whose refusal names the option.
      case "--iterations": { const t = value(); v.iterations = t.trim().toLowerCase() === "auto" ? "auto" : parseInt(t, 10); return true; }
      case "--palette": v.palette = value(); return true;
      case "--smooth": v.smooth = true; return true;
      case "--no-smooth": v.smooth = false; return true;
      case "--color": v.colouring = value(); return true;
      case "--ss": v.ss = parseInt(value(), 10); return true;
      case "--size": size = linkSize(value()); return true;
      case "--texture": v.texture = value(); return true;
      default:
        // A formula's name: the first word of fractal's command line.
        if (!w.startsWith("-") && FORMULA_CENTERS[w]) { v.formula = w; return true; }
        return false;
      }
    });
    v.center = v.center || parsePoint(FORMULA_CENTERS[v.formula]);
    Object.assign(this, v);
    this.takeLinkSize(size);
    this.resetShown();
  },

  // Julia's c from a small Mandelbrot set, rendered by the server.
  ...fractalInset,

  // The zoom video of the view, made by the server.
  ...fractalVideo,

  // Save PNG and .kfr; open a .kfr, a Glint PNG or pasted text.
  ...fractalFile,
};
