// Glint's page for `glint serve`: one view per workload, every view a command line of that
// workload, rendered by the server and streamed back over one WebSocket (docs/SERVE.md).
//
// The fractal view keeps its centre, zoom and Julia constant as exact decimals (BigInt fixed
// point): no floating-point number takes part in the view's arithmetic, so a view zoomed to any
// depth is still the exact text the command line is given.
"use strict";

(() => {

// MARK: Small functions

const $ = (id) => document.getElementById(id);
const now = () => performance.now();

/** A number as short text: at most `places` decimals, no trailing zeros, no "-0". */
function short(x, places = 3) {
  let t = Number(x).toFixed(places);
  if (t.includes(".")) t = t.replace(/0+$/, "").replace(/\.$/, "");
  return t === "-0" ? "0" : t;
}

/** One shell word: bare when safe, else in single quotes. */
function shellWord(w) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'";
}

/** Command-line words from text: split on white space, with '...' and "..." grouping. */
function splitWords(text) {
  const words = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let m;
  while ((m = re.exec(text)) !== null) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function fromBase64(text) {
  const s = atob(text);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

/** "WxH" as {w, h}, or null. */
function parseSize(text) {
  const m = /^\s*(\d{1,5})\s*[xX×]\s*(\d{1,5})\s*$/.exec(text || "");
  if (!m) return null;
  const w = parseInt(m[1], 10), h = parseInt(m[2], 10);
  return w >= 1 && h >= 1 ? { w, h } : null;
}

function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(() => notify("copied", "info"), () => fallbackCopy(text));
  } else {
    fallbackCopy(text);
  }
}

function fallbackCopy(text) {
  const t = document.createElement("textarea");
  t.value = text;
  document.body.appendChild(t);
  t.select();
  try { document.execCommand("copy"); notify("copied", "info"); } catch (e) { notify("could not copy: select the text and copy it"); }
  t.remove();
}

// MARK: Messages (a bar that never blocks the page)

const errors = [];

/** Sends `view`'s request now, or once `gap` ms have passed since its last one (a gesture
 *  sends many: the server gets at most one view per gap). */
function throttledSend(view, gap, immediately) {
  view.syncControls();
  clearTimeout(view.sendTimer);
  const wait = immediately ? 0 : Math.max(0, gap - (now() - view.lastSent));
  if (wait === 0) view.sendNow();
  else view.sendTimer = setTimeout(() => view.sendNow(), wait);
}

function notify(text, kind = "error") {
  if (kind === "error") errors.push(String(text));
  const box = $("messages");
  const el = document.createElement("div");
  el.className = "message " + kind;
  const span = document.createElement("span");
  span.textContent = text;
  const close = document.createElement("button");
  close.textContent = "×";
  close.title = "Dismiss";
  close.onclick = () => el.remove();
  el.append(span, close);
  box.appendChild(el);
  while (box.children.length > 4) box.firstChild.remove();
  setTimeout(() => el.remove(), kind === "error" ? 10000 : 2500);
}

// MARK: Exact decimals (BigInt fixed point)

const powers = [1n];
/** 10^n as a BigInt. */
function p10(n) {
  while (powers.length <= n) powers.push(powers[powers.length - 1] * 10n);
  return powers[n];
}

/** a / b rounded to the nearest integer, halves away from zero. */
function divRound(a, b) {
  if (b < 0n) { a = -a; b = -b; }
  const q = a / b, r = a % b;
  const r2 = (r < 0n ? -r : r) * 2n;
  if (r2 >= b) return a < 0n ? q - 1n : q + 1n;
  return q;
}

function digitCount(v) { return (v < 0n ? -v : v).toString().length; }

/** Decimal text (sign, digits, fraction, exponent) as {v, d}: the value v / 10^d; null if not a number. */
function parseDecimal(text) {
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,7}))?\s*$/.exec(String(text));
  if (!m) return null;
  const int = m[2] || "", frac = m[3] || "";
  if (int.length + frac.length === 0) return null;
  let v = BigInt((int + frac) || "0");
  let d = frac.length - (m[4] ? parseInt(m[4], 10) : 0);
  if (d < 0) { v *= p10(-d); d = 0; }
  if (d > 200000) return null;
  return { v: m[1] === "-" ? -v : v, d };
}

/** v / 10^d as plain decimal text, without trailing zeros. */
function decimalText(v, d) {
  const neg = v < 0n;
  let s = (neg ? -v : v).toString();
  if (d > 0) {
    s = s.padStart(d + 1, "0");
    let int = s.slice(0, s.length - d), frac = s.slice(s.length - d).replace(/0+$/, "");
    s = frac ? int + "." + frac : int;
  }
  return (neg && s !== "0" ? "-" : "") + s;
}

/** v / 10^d expressed with `d2` decimals (rounded when fewer). */
function rescale(v, d, d2) {
  return d2 >= d ? v * p10(d2 - d) : divRound(v, p10(d - d2));
}

// A zoom is {m, e}: the positive value m * 10^e.

function parseZoom(text) {
  const x = parseDecimal(text);
  if (!x || x.v <= 0n) return null;
  return roundZoom({ m: x.v, e: -x.d }, 40);
}

/** The zoom with at most `sig` significant digits (rounded), trailing zeros moved to e. */
function roundZoom(z, sig) {
  let { m, e } = z;
  const n = digitCount(m);
  if (n > sig) { m = divRound(m, p10(n - sig)); e += n - sig; }
  while (m > 0n && m % 10n === 0n) { m /= 10n; e += 1; }
  return { m, e };
}

/** floor(log10(zoom)). */
function zoomExponent(z) { return z.e + digitCount(z.m) - 1; }

/** The zoom times num/den, rounded to four significant digits, never below 1e-9. */
function scaleZoom(z, num, den) {
  const scaled = roundZoom({ m: divRound(z.m * num * p10(24), den), e: z.e - 24 }, 4);
  return zoomExponent(scaled) < -9 ? { m: 1n, e: -9 } : scaled;
}

function zoomText(z) {
  const digits = z.m.toString();
  const exp = zoomExponent(z);
  // Plain digits for everyday zooms (10.12, 150, 0.5); powers of ten past them (2.5e4, 1.5e40).
  if (exp >= -4 && exp <= 8 && z.e < 3) return z.e >= 0 ? digits + "0".repeat(z.e) : decimalText(z.m, -z.e);
  return digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") + "e" + exp;
}

function sameZoom(a, b) { return a.m === b.m && a.e === b.e; }

/** An integer square root (Newton), for the two-finger pinch's distance ratio. */
function isqrt(n) {
  if (n < 2n) return n;
  let x = BigInt(Math.round(Math.sqrt(Number(n)))) + 1n;   // a first guess only; Newton makes it exact
  for (;;) {
    const y = (x + n / x) / 2n;
    if (y >= x) break;
    x = y;
  }
  while (x * x > n) x -= 1n;
  while ((x + 1n) * (x + 1n) <= n) x += 1n;
  return x;
}

// MARK: The connection

const conn = {
  ws: null,
  open: false,
  nextId: 1,
  requests: new Map(),      // id -> {view, sentAt, firstAt, lastAt, kind, transform}
  pendingFrame: null,       // the frame header waiting for its PNG
  queued: null,             // the newest job asked for while the socket was down
  retry: 500,
};

const current = {};         // view -> the id of its newest request
const lastFrame = {};       // view -> the newest frame shown
const pngs = {};            // view -> base64 of its newest PNG
const history = {};         // view -> [{id, stage, latencyMs, wallMs}]
const sent = { render: 0, mist: 0, pulse: 0, wipe: 0, gravity: 0, stop: 0, camera: 0 };
let lastPicture = null;     // {view, width, height}: what upload:last names
let info = null;
let ready = false;

function wsURL() {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
}

function connect() {
  const ws = new WebSocket(wsURL());
  ws.binaryType = "arraybuffer";
  conn.ws = ws;
  setConnection("connecting", "");
  ws.onopen = () => {
    conn.open = true;
    conn.retry = 500;
    setConnection("connected", "open");
    if (conn.queued) {
      const q = conn.queued;
      conn.queued = null;
      q.sentAt = now();
      ws.send(JSON.stringify(q.message));
    }
  };
  ws.onclose = () => {
    const was = conn.open;
    conn.open = false;
    conn.pendingFrame = null;
    setConnection("disconnected", "closed");
    for (const v of Object.values(views)) if (v.live) v.setLive(false);
    if (was) notify("the connection to the server closed; reconnecting");
    setTimeout(connect, conn.retry);
    conn.retry = Math.min(conn.retry * 2, 5000);
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { notify("the server sent a message that is not JSON"); return; }
      onMessage(msg);
    } else {
      onPicture(ev.data);
    }
  };
}

function setConnection(text, cls) {
  const el = $("connection");
  el.textContent = text;
  el.className = "pill " + cls;
}

/** Sends a job for `view` (render, mist or pulse): it supersedes the view's and the connection's previous one. */
function request(view, message, extra = {}) {
  const id = conn.nextId++;
  message.id = id;
  const device = $("device").value;
  if (device && message.device === undefined) message.device = device;
  const req = Object.assign({ id, view, sentAt: now(), firstAt: null, lastAt: null, kind: message.type, message }, extra);
  conn.requests.set(id, req);
  current[view] = id;
  // Requests of other views were cancelled by this one (one job per connection).
  for (const [vid, v] of Object.entries(views)) if (vid !== view && v.live) v.setLive(false);
  sent[message.type] = (sent[message.type] || 0) + 1;
  if (conn.open) {
    conn.ws.send(JSON.stringify(message));
  } else {
    conn.queued = req;
  }
  views[view].status = `${view} #${id}: sent`;
  showStatus();
  return req;
}

/** A message that is not a job (wipe, gravity, stop); dropped while the socket is down. */
function sendControl(message) {
  if (!conn.open) return false;
  conn.ws.send(JSON.stringify(message));
  sent[message.type] = (sent[message.type] || 0) + 1;
  return true;
}

function onMessage(msg) {
  switch (msg.type) {
  case "frame":
    conn.pendingFrame = msg;
    break;
  case "error": {
    const req = conn.requests.get(msg.id);
    const text = msg.error || "error";
    const where = req && !text.startsWith(req.view + ":") ? req.view + ": " : "";
    notify(where + text + (msg.status ? ` (${msg.status})` : ""));
    if (req) {
      req.error = msg.error;
      const v = views[req.view];
      if (current[req.view] === req.id) {
        v.status = `${req.view} #${req.id}: error`;
        if (v.live) v.setLive(false);
        if (v.onError) v.onError(msg);
      }
      showStatus();
    }
    break;
  }
  case "done": {
    const req = conn.requests.get(msg.id);
    if (!req) break;
    req.done = true;
    const lf = lastFrame[req.view];
    if (lf && lf.id === req.id) lf.done = true;
    const v = views[req.view];
    if (current[req.view] === req.id) {
      if (v.live) v.setLive(false);
      if (v.onDone) v.onDone(req);
    }
    // Keep the map small: requests long superseded are forgotten.
    for (const id of conn.requests.keys()) if (id < msg.id - 64) conn.requests.delete(id);
    break;
  }
  default:
    break;
  }
}

function onPicture(buffer) {
  const frame = conn.pendingFrame;
  conn.pendingFrame = null;
  if (!frame) return;
  const req = conn.requests.get(frame.id);
  if (!req) return;
  const t = now();
  // A render's final picture is what upload:last names from now on (docs/SERVE.md).
  if (frame.stage === "final") lastPicture = { view: req.view, width: frame.width, height: frame.height };
  // A superseded job's late picture is not shown.
  if (current[req.view] !== req.id) return;
  const live = frame.stage === "live";
  const latency = live && req.lastAt !== null ? t - req.lastAt : t - req.sentAt;
  if (req.firstAt === null) req.firstAt = t;
  req.lastAt = t;
  const record = {
    id: frame.id, stage: frame.stage, width: frame.width, height: frame.height,
    latencyMs: Math.round(latency * 10) / 10,
    sinceRequestMs: Math.round((t - req.sentAt) * 10) / 10,
    wallMs: frame.wall_ms, kernelMs: frame.kernel_ms, device: frame.device, command: frame.command,
    spp: frame.spp, targetSpp: frame.target_spp, samplesPerSecond: frame.samples_per_second,
    frame: frame.frame, fps: frame.fps, done: false, bytes: buffer.byteLength,
  };
  lastFrame[req.view] = record;
  pngs[req.view] = base64(buffer);
  const h = history[req.view] || (history[req.view] = []);
  h.push({ id: record.id, stage: record.stage, latencyMs: record.latencyMs, sinceRequestMs: record.sinceRequestMs, wallMs: record.wallMs });
  if (h.length > 500) h.splice(0, h.length - 500);
  const view = views[req.view];
  view.status = statusLine(req, record);
  showStatus();
  view.showFrame(record, new Blob([buffer], { type: "image/png" }), req);
  isoView.describeLast();
}

function statusLine(req, r) {
  let s = `${req.view} #${r.id} ${r.stage} ${r.width}x${r.height}`;
  if (r.stage === "live") {
    s += ` · frame ${r.frame ?? "?"}` + (r.fps !== undefined ? ` · ${short(r.fps, 1)} fps` : "") + ` · every ${short(r.latencyMs, 0)} ms`;
  } else {
    s += ` · latency ${short(r.latencyMs, 0)} ms`;
  }
  if (r.wallMs !== undefined) s += ` · server ${short(r.wallMs, 1)} ms`;
  if (r.kernelMs !== undefined && r.kernelMs !== null && r.kernelMs > 0) s += ` (kernels ${short(r.kernelMs, 1)} ms)`;
  if (r.spp !== undefined) s += ` · ${r.spp}/${r.targetSpp} spp`;
  if (r.device) s += ` · ${r.device}`;
  return s;
}

function showStatus() {
  const v = views[activeView];
  $("status-text").textContent = (v && v.status) || "–";
}

// MARK: HTTP

async function postJSON(path, body) {
  const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return res;
}

async function failure(res) {
  let text = `${res.status} ${res.statusText}`;
  try {
    const j = await res.json();
    if (j && j.error) text = j.error + ` (${res.status})`;
  } catch (e) { /* not JSON */ }
  return text;
}

/** Uploads a picture (any format the browser reads; sent as PNG): {id, width, height}. */
async function upload(file) {
  let blob = file;
  if (file.type !== "image/png") {
    const bitmap = await createImageBitmap(file);
    const c = document.createElement("canvas");
    c.width = bitmap.width;
    c.height = bitmap.height;
    c.getContext("2d").drawImage(bitmap, 0, 0);
    blob = await new Promise((resolve) => c.toBlob(resolve, "image/png"));
  }
  const res = await fetch("/api/upload", { method: "POST", headers: { "Content-Type": "image/png" }, body: blob });
  if (!res.ok) throw new Error(await failure(res));
  return res.json();
}

// MARK: Canvases

/** Sizes a canvas to the largest box with its aspect ratio that fits its stage (whole CSS pixels). */
function fitCanvas(canvas) {
  const stage = canvas.parentElement;
  const aw = Math.max(1, stage.clientWidth - 16), ah = Math.max(1, stage.clientHeight - 16);
  const scale = Math.min(aw / canvas.width, ah / canvas.height);
  const w = Math.max(1, Math.floor(canvas.width * scale)), h = Math.max(1, Math.floor(canvas.height * scale));
  canvas.style.width = w + "px";
  canvas.style.height = h + "px";
  canvas.cssW = w;
  canvas.cssH = h;
}

function setCanvasSize(canvas, w, h) {
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    fitCanvas(canvas);
  }
}

/** A pointer's position on a canvas in whole CSS pixels. */
function pointerAt(canvas, e) {
  const r = canvas.getBoundingClientRect();
  return { x: Math.round(e.clientX - r.left), y: Math.round(e.clientY - r.top) };
}

/** A short hash of a canvas's pixels (for the tests: "did the picture change"). */
function canvasHash(canvas) {
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data[i], 0x01000193);
  return (h >>> 0).toString(16) + ":" + canvas.width + "x" + canvas.height;
}

/** Decodes pictures one after another so that they are drawn in arrival order. */
function decoder() {
  let chain = Promise.resolve();
  return (blob, draw) => {
    chain = chain.then(() => createImageBitmap(blob)).then(draw).catch((e) => notify("could not decode a picture: " + e.message));
  };
}

// MARK: The fractal explorer

const FORMULA_CENTERS = {
  "mandelbrot": "-0.75,0", "burning-ship": "-0.45,-0.5", "julia": "0,0", "sierpinski-julia": "0,0", "image-julia": "0,0",
};
const JULIA_TYPES = new Set(["julia", "sierpinski-julia", "image-julia"]);
const DEFAULT_C = "-0.76,0.15";

/** An exact point of the plane: (re, im) / 10^d. */
function parsePoint(text) {
  const parts = String(text).split(",");
  if (parts.length !== 2) return null;
  const a = parseDecimal(parts[0]), b = parseDecimal(parts[1]);
  if (!a || !b) return null;
  const d = Math.max(a.d, b.d);
  return { re: rescale(a.v, a.d, d), im: rescale(b.v, b.d, d), d };
}

function pointText(p) { return decimalText(p.re, p.d) + "," + decimalText(p.im, p.d); }

function samePoint(a, b) {
  const d = Math.max(a.d, b.d);
  return rescale(a.re, a.d, d) === rescale(b.re, b.d, d) && rescale(a.im, a.d, d) === rescale(b.im, b.d, d);
}

const fractalView = {
  canvas: null,
  formula: "mandelbrot",
  palette: "tutorial",
  smooth: false,
  iterations: 128,
  ss: 1,
  size: { w: 640, h: 400 },
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
  decode: decoder(),
  status: "",
  live: false,
  setLive() {},

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
    $("fractal-iterations").onchange = (e) => {
      const n = parseInt(e.target.value, 10);
      if (!(n >= 1 && n <= 16777216)) { notify("iterations: a whole number from 1 to 16777216"); e.target.value = this.iterations; return; }
      this.iterations = n;
      this.send(true);
    };
    $("fractal-ss").onchange = (e) => {
      const n = parseInt(e.target.value, 10);
      if (!(n >= 1 && n <= 16)) { notify("supersampling: 1 to 16"); e.target.value = this.ss; return; }
      this.ss = n;
      this.send(true);
    };
    $("fractal-size").onchange = (e) => {
      const s = parseSize(e.target.value);
      if (!s) { notify("size: WxH, e.g. 640x400"); e.target.value = `${this.size.w}x${this.size.h}`; return; }
      this.size = s;
      this.resetShown();
      this.send(true);
    };
    $("fractal-texture").onchange = async (e) => {
      const f = e.target.files[0];
      if (!f) return;
      try {
        const u = await upload(f);
        this.texture = u.id;
        this.send(true);
      } catch (err) { notify("texture: " + err.message); }
    };
    $("fractal-reset").onclick = () => {
      this.center = parsePoint(FORMULA_CENTERS[this.formula]);
      this.zoom = { m: 1n, e: 0 };
      this.resetShown();
      this.send(true);
    };
    $("fractal-zoom-in").onclick = () => { this.zoomAt(2n, 1n, this.canvas.cssW >> 1, this.canvas.cssH >> 1); this.send(true); };
    $("fractal-zoom-out").onclick = () => { this.zoomAt(1n, 2n, this.canvas.cssW >> 1, this.canvas.cssH >> 1); this.send(true); };
    $("fractal-go").onclick = () => this.go();
    for (const id of ["fractal-center", "fractal-zoom"]) $(id).addEventListener("keydown", (e) => { if (e.key === "Enter") this.go(); });
    $("fractal-c").addEventListener("change", (e) => {
      const p = parsePoint(e.target.value);
      if (!p) { notify("c: RE,IM, e.g. -0.8,0.156"); e.target.value = pointText(this.c); return; }
      this.c = p;
      this.send(true);
    });
    $("fractal-copy-location").onclick = () => copyText(`--center ${pointText(this.center)} --zoom ${zoomText(this.zoom)}`);
    $("fractal-copy-kfr").onclick = () => copyText($("fractal-kfr").value);
    $("fractal-copy-cli").onclick = () => copyText($("fractal-cli").value);
    $("fractal-inset").addEventListener("click", (e) => this.insetClick(e));
    this.syncControls();
  },

  go() {
    const p = parsePoint($("fractal-center").value);
    const z = parseZoom($("fractal-zoom").value);
    if (!p) { notify("centre: X,Y, e.g. -0.7435669,0.1314023"); return; }
    if (!z || zoomExponent(z) < -9) { notify("zoom: a positive decimal of at least 1e-9, e.g. 2e4"); return; }
    this.center = p;
    this.zoom = z;
    this.resetShown();
    this.send(true);
  },

  // The view's arithmetic, all exact.

  /** Decimals the centre needs at this zoom: a thousandth of a pixel. */
  neededDigits(zoom = this.zoom) {
    return Math.max(4, zoomExponent(zoom) + 1 + String(this.size.h).length + 3);
  },

  /** The centre with `d` decimals. */
  setDigits(d) {
    const c = this.center;
    if (c.d === d) return;
    this.center = { re: rescale(c.re, c.d, d), im: rescale(c.im, c.d, d), d };
  },

  /**
   * The plane distance of num/den render pixels at `zoom`, in units of 10^-d of the centre:
   * num/den * 2 / (zoom * H).
   */
  planeOffset(num, den, zoom = this.zoom) {
    const H = BigInt(this.size.h), d = this.center.d;
    if (zoom.e >= 0) return divRound(num * 2n * p10(d), den * H * zoom.m * p10(zoom.e));
    return divRound(num * 2n * p10(d) * p10(-zoom.e), den * H * zoom.m);
  },

  /** Pans by a pointer move of (dx, dy) CSS pixels: the picture follows the pointer. */
  pan(dx, dy) {
    if (dx === 0 && dy === 0) return;
    const { w, h } = this.size;
    const cw = BigInt(this.canvas.cssW), ch = BigInt(this.canvas.cssH);
    this.setDigits(this.neededDigits());
    const re = this.center.re - this.planeOffset(BigInt(dx) * BigInt(w), cw);
    const im = this.center.im + this.planeOffset(BigInt(dy) * BigInt(h), ch);
    this.center = { re, im, d: this.center.d };
    const sx = w / this.canvas.cssW, sy = h / this.canvas.cssH;   // display only
    this.shown.tx += dx * sx;
    this.shown.ty += dy * sy;
    this.redraw();
  },

  /**
   * Zooms by num/den keeping the point under (x, y) CSS pixels where it is: the centre moves by
   * that point's offset at the old zoom less its offset at the new one.
   */
  zoomAt(num, den, x, y) {
    const { w, h } = this.size;
    const cw = BigInt(this.canvas.cssW || w), ch = BigInt(this.canvas.cssH || h);
    const W = BigInt(w), H = BigInt(h);
    const old = this.zoom;
    const zoom = scaleZoom(old, num, den);
    if (sameZoom(zoom, old)) return;
    // The anchor's offset from the centre in render pixels, as fractions.
    const axNum = 2n * BigInt(x) * W - W * cw, axDen = 2n * cw;
    const ayNum = 2n * BigInt(y) * H - H * ch, ayDen = 2n * ch;
    this.setDigits(Math.max(this.neededDigits(old), this.neededDigits(zoom)));
    const re = this.center.re + this.planeOffset(axNum, axDen, old) - this.planeOffset(axNum, axDen, zoom);
    const im = this.center.im - this.planeOffset(ayNum, ayDen, old) + this.planeOffset(ayNum, ayDen, zoom);
    this.center = { re, im, d: this.center.d };
    this.zoom = zoom;
    this.setDigits(this.neededDigits(zoom));
    // Display only: the last picture scaled about the anchor.
    const f = Number(num) / Number(den);
    const px = x * w / this.canvas.cssW, py = y * h / this.canvas.cssH;
    this.shown = { s: this.shown.s * f, tx: f * this.shown.tx + px * (1 - f), ty: f * this.shown.ty + py * (1 - f) };
    this.redraw();
  },

  /** Moves Julia's c by a drag of (dx, dy) CSS pixels: the canvas's height is one unit. */
  moveC(dx, dy) {
    const d = Math.max(6, this.c.d);
    const ch = BigInt(this.canvas.cssH);
    const re = rescale(this.c.re, this.c.d, d) + divRound(BigInt(dx) * p10(d), ch);
    const im = rescale(this.c.im, this.c.d, d) - divRound(BigInt(dy) * p10(d), ch);
    this.c = { re, im, d };
  },

  // Gestures

  pointerDown(e) {
    const c = this.canvas;
    c.setPointerCapture(e.pointerId);
    const p = pointerAt(c, e);
    const moveC = (e.button === 2 || e.ctrlKey) && JULIA_TYPES.has(this.formula);
    this.pointers.set(e.pointerId, { x: p.x, y: p.y, moveC });
    if (this.pointers.size === 2) this.pinchStart();
    e.preventDefault();
  },

  pointerMove(e) {
    const ptr = this.pointers.get(e.pointerId);
    if (!ptr) return;
    const p = pointerAt(this.canvas, e);
    if (this.pointers.size >= 2) {
      ptr.x = p.x;
      ptr.y = p.y;
      this.pinchMove();
    } else {
      const dx = p.x - ptr.x, dy = p.y - ptr.y;
      if (dx === 0 && dy === 0) return;
      ptr.x = p.x;
      ptr.y = p.y;
      if (ptr.moveC) this.moveC(dx, dy); else this.pan(dx, dy);
    }
    this.send(false);
  },

  pointerUp(e) {
    if (!this.pointers.has(e.pointerId)) return;
    this.pointers.delete(e.pointerId);
    this.pinch = null;
    if (this.pointers.size === 1) {
      // The finger left on the glass goes on panning from where it is.
      this.pinch = null;
    }
    this.send(true);
  },

  pinchStart() {
    const [a, b] = [...this.pointers.values()];
    this.pinch = { a: { ...a }, b: { ...b } };
  },

  /** Two pointers: zoom by the ratio of their distances, about their midpoint, and pan with it. */
  pinchMove() {
    const [a, b] = [...this.pointers.values()];
    const last = this.pinch;
    if (!last) { this.pinchStart(); return; }
    const d0 = BigInt((last.a.x - last.b.x) ** 2 + (last.a.y - last.b.y) ** 2);
    const d1 = BigInt((a.x - b.x) ** 2 + (a.y - b.y) ** 2);
    const m0 = { x: (last.a.x + last.b.x) >> 1, y: (last.a.y + last.b.y) >> 1 };
    const m1 = { x: (a.x + b.x) >> 1, y: (a.y + b.y) >> 1 };
    this.pan(m1.x - m0.x, m1.y - m0.y);
    if (d0 > 0n && d1 > 0n) {
      const num = isqrt(d1 * p10(12)), den = isqrt(d0 * p10(12));
      this.zoomAt(num, den, m1.x, m1.y);
    }
    this.pinch = { a: { ...a }, b: { ...b } };
  },

  wheelRest: 0,
  wheel(e) {
    e.preventDefault();
    // Whole notches of 100 (lines count 40): each zooms by 3/2.
    const unit = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
    this.wheelRest += Math.round(e.deltaY * unit);
    const steps = Math.trunc(this.wheelRest / 100);
    if (steps === 0) return;
    this.wheelRest -= steps * 100;
    const p = pointerAt(this.canvas, e);
    const n = Math.min(Math.abs(steps), 20);
    const num = steps < 0 ? 3n ** BigInt(n) : 2n ** BigInt(n);
    const den = steps < 0 ? 2n ** BigInt(n) : 3n ** BigInt(n);
    this.zoomAt(num, den, p.x, p.y);
    this.send(false);
  },

  resetShown() {
    this.shown = { s: 1, tx: 0, ty: 0 };
    this.bitmapTransform = null;
  },

  /** The last picture, moved by the gestures made since it was asked for. */
  redraw() {
    const c = this.canvas, ctx = c.getContext("2d");
    if (!this.bitmap) return;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    if (!this.bitmapTransform) {
      ctx.drawImage(this.bitmap, 0, 0, c.width, c.height);
      return;
    }
    const f = this.bitmapTransform, n = this.shown;
    const s = n.s / f.s;
    ctx.fillStyle = "#000";
    ctx.fillRect(0, 0, c.width, c.height);
    ctx.setTransform(s, 0, 0, s, n.tx - s * f.tx, n.ty - s * f.ty);
    ctx.drawImage(this.bitmap, 0, 0, c.width, c.height);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
  },

  // The job

  args() {
    const a = [this.formula, "--size", `${this.size.w}x${this.size.h}`];
    if (!samePoint(this.center, parsePoint(FORMULA_CENTERS[this.formula]))) a.push("--center", pointText(this.center));
    if (!sameZoom(this.zoom, { m: 1n, e: 0 })) a.push("--zoom", zoomText(this.zoom));
    if (JULIA_TYPES.has(this.formula)) a.push("--c", pointText(this.c));
    if (this.iterations !== 128) a.push("--iterations", String(this.iterations));
    if (this.palette !== "tutorial") a.push("--palette", this.palette);
    if (this.smooth) a.push("--smooth");
    if (this.ss !== 1) a.push("--ss", String(this.ss));
    if (this.formula === "image-julia" && this.texture) a.push("--texture", this.texture);
    return a.concat(this.extra);
  },

  /** Asks for the view now (`now`), or within a tenth of a second while a gesture goes on. */
  send(immediately) { throttledSend(this, 100, immediately); },

  sendNow() {
    this.lastSent = now();
    if (this.formula === "image-julia" && !this.texture) {
      notify("image-julia needs a texture: pick a picture under the view's controls", "info");
      return;
    }
    const args = this.args();
    request("fractal", { type: "render", workload: "fractal", args, preview: true }, { transform: { ...this.shown } });
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
    if (record.stage === "final") this.fetchLocation(req);
  },

  onDone(req) {
    const lf = lastFrame.fractal;
    if (lf && lf.id === req.id && lf.stage !== "final") this.fetchLocation(req);
  },

  async fetchLocation(req) {
    try {
      const res = await postJSON("/api/location", { workload: "fractal", args: req.message.args });
      if (!res.ok) throw new Error(await failure(res));
      const text = await res.text();
      if (current.fractal === req.id) {
        $("fractal-kfr").value = text;
        locationText = text;
      }
    } catch (e) {
      notify("location: " + e.message);
    }
  },

  syncControls() {
    $("fractal-formula").value = this.formula;
    $("fractal-palette").value = this.palette;
    $("fractal-smooth").checked = this.smooth;
    $("fractal-iterations").value = this.iterations;
    $("fractal-ss").value = this.ss;
    $("fractal-size").value = `${this.size.w}x${this.size.h}`;
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
      formula: "mandelbrot", palette: "tutorial", smooth: false, iterations: 128, ss: 1, size: { w: 640, h: 400 },
      center: null, zoom: { m: 1n, e: 0 }, c: parsePoint(DEFAULT_C), texture: null, extra: [],
    };
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      const value = () => {
        if (i + 1 >= words.length) throw new Error(`${w} needs a value`);
        return words[++i];
      };
      switch (w) {
      case "--center": { const p = parsePoint(value()); if (!p) throw new Error("--center: X,Y"); v.center = p; break; }
      case "--zoom": { const z = parseZoom(value()); if (!z) throw new Error("--zoom: a positive decimal"); v.zoom = z; break; }
      case "--c": { const p = parsePoint(value()); if (!p) throw new Error("--c: RE,IM"); v.c = p; break; }
      case "--iterations": v.iterations = parseInt(value(), 10); break;
      case "--palette": v.palette = value(); break;
      case "--smooth": v.smooth = true; break;
      case "--no-smooth": v.smooth = false; break;
      case "--ss": v.ss = parseInt(value(), 10); break;
      case "--size": { const s = parseSize(value()); if (!s) throw new Error("--size: WxH"); v.size = s; break; }
      case "--texture": v.texture = value(); break;
      default:
        if (!w.startsWith("-") && FORMULA_CENTERS[w]) { v.formula = w; break; }
        v.extra.push(w);
        if (w.startsWith("--") && i + 1 < words.length && !words[i + 1].startsWith("--")) v.extra.push(words[++i]);
      }
    }
    v.center = v.center || parsePoint(FORMULA_CENTERS[v.formula]);
    Object.assign(this, v);
    this.resetShown();
  },

  // Julia's c from a small Mandelbrot set, rendered by the server.
  inset: { stale: true, loading: false, bitmap: null },
  INSET: { w: 192, h: 128, center: "-0.6,0" },

  async showInset() {
    const inset = this.inset;
    if (!inset.stale || inset.loading || !ready) { this.drawInset(); return; }
    inset.loading = true;
    try {
      const body = { workload: "fractal", args: ["mandelbrot", "--size", `${this.INSET.w}x${this.INSET.h}`, "--center", this.INSET.center, "--palette", this.palette] };
      const device = $("device").value;
      if (device) body.device = device;
      const res = await postJSON("/api/render", body);
      if (!res.ok) throw new Error(await failure(res));
      inset.bitmap = await createImageBitmap(await res.blob());
      inset.stale = false;
    } catch (e) {
      notify("the c picker's picture: " + e.message);
    } finally {
      inset.loading = false;
    }
    this.drawInset();
  },

  drawInset() {
    const c = $("fractal-inset"), ctx = c.getContext("2d");
    ctx.fillStyle = "#000";
    ctx.fillRect(0, 0, c.width, c.height);
    if (this.inset.bitmap) ctx.drawImage(this.inset.bitmap, 0, 0, c.width, c.height);
    // The marker at c (display only).
    const x = (Number(decimalText(this.c.re, this.c.d)) + 0.6) * 64 + 96;
    const y = 64 - Number(decimalText(this.c.im, this.c.d)) * 64;
    ctx.strokeStyle = "#fff";
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.arc(x, y, 4, 0, 2 * Math.PI);
    ctx.stroke();
  },

  /** A click on the inset: c is the point of the plane under it (exact: the inset's zoom is 1). */
  insetClick(e) {
    const p = pointerAt($("fractal-inset"), e);
    const d = 6;
    // re = -0.6 + (x - W/2) * 2/H, im = -(y - H/2) * 2/H with W = 192, H = 128.
    const re = -600000n + divRound(BigInt(p.x - 96) * p10(d), 64n);
    const im = -divRound(BigInt(p.y - 64) * p10(d), 64n);
    this.c = { re, im, d };
    this.send(true);
  },
};

let locationText = "";

/** The server's echoed command with an output file (and nothing more). */
function cliCommand(command, output) {
  return / -o /.test(command) ? command : command + " -o " + output;
}

// MARK: The ray tracer

const RTOW_DEFAULTS = { vfov: 20, aperture: 0.1, focus: 10 };

const rtowView = {
  canvas: null,
  scene: "ch10",
  spp: 50,
  size: { w: 450, h: 300 },
  seed: 0,
  lon: 0, lat: 0, roll: 0,
  distanceSteps: 0,        // wheel notches: each moves the eye by 1.1 (out) or 1/1.1 (in)
  distances: [],           // the --distance factors (text), from the notches or a link
  vfov: RTOW_DEFAULTS.vfov, aperture: RTOW_DEFAULTS.aperture, focus: RTOW_DEFAULTS.focus,
  extra: [],
  drag: null,
  sendTimer: null, lastSent: 0,
  decode: decoder(),
  status: "",
  live: false,
  setLive() {},

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
      this.distanceSteps = Math.max(-60, Math.min(60, this.distanceSteps + steps));
      this.distances = distanceFactors(this.distanceSteps);
      this.send(false);
    }, { passive: false });
    $("rtow-scene").onchange = (e) => { this.scene = e.target.value; this.send(true); };
    $("rtow-spp").onchange = (e) => { this.spp = parseInt(e.target.value, 10); this.send(true); };
    $("rtow-seed").onchange = (e) => {
      const n = e.target.value.trim();
      if (!/^\d{1,20}$/.test(n)) { notify("seed: a whole number from 0"); e.target.value = this.seed; return; }
      this.seed = n;
      this.send(true);
    };
    $("rtow-size").onchange = (e) => {
      const s = parseSize(e.target.value);
      if (!s) { notify("size: WxH, e.g. 450x300"); e.target.value = `${this.size.w}x${this.size.h}`; return; }
      this.size = s;
      this.send(true);
    };
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

  sendNow() {
    this.lastSent = now();
    const args = this.args();
    request("rtow", { type: "render", workload: "rtow", args });
    setHash("rtow", args);
    $("rtow-progress").value = 0;
  },

  showFrame(record, blob, req) {
    setCanvasSize(this.canvas, record.width, record.height);
    this.decode(blob, (bitmap) => {
      if (current.rtow !== req.id) return;
      const ctx = this.canvas.getContext("2d");
      ctx.drawImage(bitmap, 0, 0, this.canvas.width, this.canvas.height);
    });
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
    $("rtow-size").value = `${this.size.w}x${this.size.h}`;
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
    const v = { scene: "ch10", spp: 50, size: { w: 450, h: 300 }, seed: 0, lon: 0, lat: 0, roll: 0,
      distanceSteps: 0, distances: [], ...RTOW_DEFAULTS, extra: [] };
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      const value = () => {
        if (i + 1 >= words.length) throw new Error(`${w} needs a value`);
        return words[++i];
      };
      const num = (name) => {
        const x = Number(value());
        if (!Number.isFinite(x)) throw new Error(`${name}: a number`);
        return x;
      };
      switch (w) {
      case "--scene": v.scene = value(); break;
      case "--spp": v.spp = parseInt(value(), 10); break;
      case "--size": { const s = parseSize(value()); if (!s) throw new Error("--size: WxH"); v.size = s; break; }
      case "--seed": v.seed = value(); break;
      case "--vfov": v.vfov = num(w); break;
      case "--aperture": v.aperture = num(w); break;
      case "--focus-dist": v.focus = num(w); break;
      case "--roll": v.roll = num(w); break;
      case "--orbit": {
        const p = value().split(",").map(Number);
        if (p.length !== 2 || !p.every(Number.isFinite)) throw new Error("--orbit: LON,LAT");
        [v.lon, v.lat] = p;
        break;
      }
      case "--distance": {
        const f = value();
        if (!(Number(f) > 0)) throw new Error("--distance: a factor above 0");
        v.distances.push(f);
        break;
      }
      default:
        v.extra.push(w);
        if (w.startsWith("--") && i + 1 < words.length && !words[i + 1].startsWith("--")) v.extra.push(words[++i]);
      }
    }
    // Wheel notches go on from the product of the factors given.
    const product = v.distances.reduce((p, f) => p * Number(f), 1);
    v.distanceSteps = Math.round(Math.log(product) / Math.log(1.1));
    Object.assign(this, v);
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

// MARK: The misty window

const mistView = {
  canvas: null,
  live: false,
  uploadId: null,
  gravity: { x: 0, y: 1 },
  stroke: null,            // the wipe being drawn: points not yet sent
  strokeTimer: null,
  camera: null,            // {stream, timer, canvas, w, h}
  decode: decoder(),
  status: "",

  init() {
    this.canvas = $("canvas-mist");
    const c = this.canvas;
    $("mist-source").onchange = () => this.syncControls();
    $("mist-file").onchange = async (e) => {
      const f = e.target.files[0];
      if (!f) return;
      try {
        const u = await upload(f);
        this.uploadId = u.id;
        notify(`uploaded ${u.width}x${u.height}`, "info");
      } catch (err) { notify("upload: " + err.message); }
    };
    $("mist-start").onclick = () => this.start();
    $("mist-stop").onclick = () => this.stop();
    $("mist-radius").oninput = (e) => { $("mist-radius-value").textContent = e.target.value; };
    c.addEventListener("pointerdown", (e) => {
      c.setPointerCapture(e.pointerId);
      this.stroke = { points: [this.fraction(e)], last: null };
      this.flushLater();
      e.preventDefault();
    });
    c.addEventListener("pointermove", (e) => {
      if (!this.stroke) return;
      this.stroke.points.push(this.fraction(e));
      this.flushLater();
    });
    const up = () => { if (this.stroke) { this.flush(); this.stroke = null; } };
    c.addEventListener("pointerup", up);
    c.addEventListener("pointercancel", up);
    const pad = $("mist-gravity");
    pad.addEventListener("pointerdown", (e) => { pad.setPointerCapture(e.pointerId); this.gravityAt(e); });
    pad.addEventListener("pointermove", (e) => { if (e.buttons) this.gravityAt(e); });
    this.drawGravity();
    this.syncControls();
  },

  syncControls() {
    const source = $("mist-source").value;
    $("mist-file-row").classList.toggle("hidden", source !== "upload");
    $("mist-camera-row").classList.toggle("hidden", source !== "camera");
  },

  /** A pointer's position as fractions of the picture's width and height (4 decimals). */
  fraction(e) {
    const p = pointerAt(this.canvas, e);
    const f = (v, n) => Math.round(Math.max(0, Math.min(1, v / n)) * 10000) / 10000;
    return [f(p.x, this.canvas.cssW), f(p.y, this.canvas.cssH)];
  },

  flushLater() {
    if (!this.strokeTimer) this.strokeTimer = setTimeout(() => this.flush(), 50);
  },

  /** Sends the stroke's new points as one wipe, starting from where the last batch ended. */
  flush() {
    clearTimeout(this.strokeTimer);
    this.strokeTimer = null;
    const s = this.stroke;
    if (!s || s.points.length === 0) return;
    const points = (s.last ? [s.last] : []).concat(s.points);
    s.last = s.points[s.points.length - 1];
    s.points = [];
    if (this.live) sendControl({ type: "wipe", points, radius: parseFloat($("mist-radius").value) });
  },

  gravityAt(e) {
    const pad = $("mist-gravity");
    const p = pointerAt(pad, e);
    const half = pad.clientWidth / 2;
    const x = Math.round((p.x - half) / (half - 8) * 100) / 100, y = Math.round((p.y - half) / (half - 8) * 100) / 100;
    if (x === 0 && y === 0) return;
    this.gravity = { x: Math.max(-1, Math.min(1, x)), y: Math.max(-1, Math.min(1, y)) };
    $("mist-gravity-value").textContent = `${short(this.gravity.x, 2)},${short(this.gravity.y, 2)}`;
    this.drawGravity();
    if (this.live) sendControl({ type: "gravity", x: this.gravity.x, y: this.gravity.y });
  },

  drawGravity() {
    const pad = $("mist-gravity"), ctx = pad.getContext("2d");
    const half = pad.width / 2, r = half - 8;
    ctx.clearRect(0, 0, pad.width, pad.height);
    ctx.strokeStyle = "#444";
    ctx.beginPath();
    ctx.arc(half, half, r, 0, 2 * Math.PI);
    ctx.stroke();
    const x = half + this.gravity.x * r, y = half + this.gravity.y * r;
    ctx.strokeStyle = "#e0a030";
    ctx.fillStyle = "#e0a030";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.moveTo(half, half);
    ctx.lineTo(x, y);
    ctx.stroke();
    ctx.beginPath();
    ctx.arc(x, y, 4, 0, 2 * Math.PI);
    ctx.fill();
  },

  args() {
    const a = ["--drops", $("mist-drops").value.trim(), "--sigma", $("mist-sigma").value.trim(),
      "--gravity", `${short(this.gravity.x, 2)},${short(this.gravity.y, 2)}`];
    const seed = $("mist-seed").value.trim();
    if (seed && seed !== "0") a.push("--seed", seed);
    if ($("mist-classic").checked) a.push("--classic");
    return a;
  },

  async start() {
    const source = $("mist-source").value;
    const message = { type: "mist", args: this.args() };
    if (source === "upload") {
      if (!this.uploadId) { notify("pick a picture to upload first"); return; }
      message.source = this.uploadId;
    } else if (source === "camera") {
      const size = parseSize($("mist-camera-size").value);
      if (!size) { notify("camera size: WxH, e.g. 320x240"); return; }
      if (!(await this.startCamera(size))) return;
      message.source = "camera";
      message.size = `${size.w}x${size.h}`;
    } else {
      if (!lastPicture) notify("no picture rendered yet on this connection: render a view first", "info");
      message.source = "render";
    }
    request("mist", message);
    this.setLive(true);
  },

  stop() {
    sendControl({ type: "stop" });
    this.setLive(false);
  },

  setLive(live) {
    this.live = live;
    $("mist-start").disabled = live;
    if (!live) this.stopCamera();
  },

  /** The camera, drawn at the size the mist was started with and sent as raw RGBA at most 15 times a second. */
  async startCamera(size) {
    this.stopCamera();
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      notify("this browser gives the page no camera");
      return false;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { width: size.w, height: size.h }, audio: false });
    } catch (e) {
      notify("camera: " + e.message);
      return false;
    }
    const video = $("mist-video");
    video.srcObject = stream;
    await video.play().catch(() => {});
    const grab = document.createElement("canvas");
    grab.width = size.w;
    grab.height = size.h;
    const ctx = grab.getContext("2d", { willReadFrequently: true });
    const timer = setInterval(() => {
      if (!this.live || !conn.open || video.videoWidth === 0) return;
      if (conn.ws.bufferedAmount > size.w * size.h * 8) return;   // the server is behind: skip this one
      // Cover the frame size with the camera picture, cropping the rest.
      const s = Math.max(size.w / video.videoWidth, size.h / video.videoHeight);
      const w = video.videoWidth * s, h = video.videoHeight * s;
      ctx.drawImage(video, (size.w - w) / 2, (size.h - h) / 2, w, h);
      conn.ws.send(ctx.getImageData(0, 0, size.w, size.h).data.buffer);
      sent.camera += 1;
    }, 67);
    this.camera = { stream, timer };
    return true;
  },

  stopCamera() {
    if (!this.camera) return;
    clearInterval(this.camera.timer);
    for (const t of this.camera.stream.getTracks()) t.stop();
    $("mist-video").srcObject = null;
    this.camera = null;
  },

  showFrame(record, blob, req) {
    setCanvasSize(this.canvas, record.width, record.height);
    this.decode(blob, (bitmap) => {
      if (current.mist !== req.id) return;
      this.canvas.getContext("2d").drawImage(bitmap, 0, 0, this.canvas.width, this.canvas.height);
    });
  },
};

// MARK: The pulse

const pulseView = {
  canvas: null,
  live: false,
  decode: decoder(),
  status: "",
  restartTimer: null,

  init() {
    this.canvas = $("canvas-pulse");
    for (const [id, out] of [["pulse-hue", "pulse-hue-value"], ["pulse-center", "pulse-center-value"], ["pulse-range", "pulse-range-value"]]) {
      $(id).addEventListener("input", (e) => {
        $(out).textContent = e.target.value;
        this.changed();
      });
    }
    $("pulse-size").onchange = () => this.changed();
    $("pulse-start").onclick = () => this.start();
    $("pulse-stop").onclick = () => this.stop();
    this.syncCLI();
  },

  args() {
    const size = parseSize($("pulse-size").value) || { w: 320, h: 180 };
    return ["--size", `${size.w}x${size.h}`, "--hue", $("pulse-hue").value,
      "--purity-center", $("pulse-center").value, "--purity-range", $("pulse-range").value];
  },

  syncCLI() {
    $("pulse-cli").value = ["glint", "pulse", ...this.args()].map(shellWord).join(" ") + " -o pulse";
  },

  /** A control moved: the live pulse restarts with it (at most ten times a second). */
  changed() {
    this.syncCLI();
    if (!this.live) return;
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => this.start(), 100);
  },

  start() {
    if (!parseSize($("pulse-size").value)) { notify("size: WxH, e.g. 320x180"); return; }
    this.syncCLI();
    request("pulse", { type: "pulse", args: this.args() });
    this.setLive(true);
  },

  stop() {
    sendControl({ type: "stop" });
    this.setLive(false);
  },

  setLive(live) {
    this.live = live;
    $("pulse-start").disabled = live;
  },

  showFrame(record, blob, req) {
    setCanvasSize(this.canvas, record.width, record.height);
    this.decode(blob, (bitmap) => {
      if (current.pulse !== req.id) return;
      this.canvas.getContext("2d").drawImage(bitmap, 0, 0, this.canvas.width, this.canvas.height);
    });
    if (record.fps !== undefined) $("pulse-rate").textContent = `frame ${record.frame} · ${short(record.fps, 1)} fps · server ${short(record.wallMs, 1)} ms a frame`;
  },
};

// MARK: Iso

const isoView = {
  canvas: null,
  live: false,
  uploadId: null,
  decode: decoder(),
  status: "",
  setLive() {},

  init() {
    this.canvas = $("canvas-iso");
    $("iso-source").onchange = () => {
      $("iso-file-row").classList.toggle("hidden", $("iso-source").value !== "upload");
      this.syncCLI();
    };
    $("iso-file").onchange = async (e) => {
      const f = e.target.files[0];
      if (!f) return;
      try {
        const u = await upload(f);
        this.uploadId = u.id;
        notify(`uploaded ${u.width}x${u.height}`, "info");
        this.syncCLI();
      } catch (err) { notify("upload: " + err.message); }
    };
    for (const id of ["iso-depth", "iso-radius", "iso-ss"]) $(id).addEventListener("change", () => this.syncCLI());
    $("iso-apply").onclick = () => this.apply();
    this.syncCLI();
  },

  input() { return $("iso-source").value === "upload" ? this.uploadId : "upload:last"; },

  args() {
    const a = [this.input() || "upload:last"];
    const depth = $("iso-depth").value.trim(), radius = $("iso-radius").value.trim(), ss = $("iso-ss").value.trim();
    if (depth !== "20") a.push("--depth", depth);
    if (radius !== "0") a.push("--corner-radius", radius);
    if (ss !== "4") a.push("--ss", ss);
    return a;
  },

  syncCLI() {
    const a = this.args();
    a[0] = a[0] === "upload:last" ? "view.png" : "picture.png";
    $("iso-cli").value = ["glint", "iso", ...a].map(shellWord).join(" ") + " -o view-iso.png";
  },

  describeLast() {
    $("iso-last").textContent = lastPicture
      ? `the current view: ${lastPicture.view}, ${lastPicture.width}x${lastPicture.height}`
      : "nothing rendered yet";
  },

  apply() {
    if ($("iso-source").value === "upload" && !this.uploadId) { notify("pick a picture to upload first"); return; }
    if ($("iso-source").value === "last" && !lastPicture) { notify("render a view first: iso applies to the last picture"); return; }
    this.syncCLI();
    request("iso", { type: "render", workload: "iso", args: this.args() });
  },

  showFrame(record, blob, req) {
    setCanvasSize(this.canvas, record.width, record.height);
    this.decode(blob, (bitmap) => {
      if (current.iso !== req.id) return;
      const ctx = this.canvas.getContext("2d");
      ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
      ctx.drawImage(bitmap, 0, 0, this.canvas.width, this.canvas.height);
    });
  },
};

// MARK: Compare

let lastCompare = null;

const compareView = {
  live: false,
  status: "",
  running: false,
  setLive() {},
  showFrame() {},

  init() {
    $("compare-from").onchange = () => this.fill();
    $("compare-run").onclick = () => this.run();
  },

  /** The job's text from the chosen view. */
  fill() {
    const from = $("compare-from").value;
    if (from === "fractal") $("compare-args").value = ["fractal", ...fractalView.args()].map(shellWord).join(" ");
    else if (from === "rtow") $("compare-args").value = ["rtow", ...rtowView.args()].map(shellWord).join(" ");
    else if (from === "pulse") $("compare-args").value = ["pulse", ...pulseView.args(), "--frames", "30"].map(shellWord).join(" ");
  },

  async run() {
    if (this.running) return;
    const words = splitWords($("compare-args").value);
    if (words.length === 0) { notify("compare: give a workload and its options"); return; }
    const body = { workload: words[0], args: words.slice(1), a: $("compare-a").value, b: $("compare-b").value };
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
      lastCompare = { ms: Math.round(ms), request: body, result: stripImages(result) };
      this.status = `compare ${body.workload}: ${body.a} vs ${body.b} · ${short(ms, 0)} ms`;
    } catch (e) {
      notify("compare: " + e.message);
      $("compare-verdict").textContent = "compare failed: " + e.message;
      $("compare-verdict").className = "verdict fail";
      lastCompare = { error: e.message, request: body };
      this.status = "compare: failed";
    } finally {
      this.running = false;
      $("compare-run").disabled = false;
      showStatus();
    }
  },

  async show(r, body, ms) {
    const sides = [["a", "canvas-compare-a", "compare-a-caption"], ["b", "canvas-compare-b", "compare-b-caption"]];
    for (const [key, canvasId, captionId] of sides) {
      const side = r[key] || {};
      await drawBase64($(canvasId), side.png);
      $(captionId).textContent = `${key.toUpperCase()}: ${side.device || body[key]}` +
        (typeof side.wall_ms === "number" ? ` · ${short(side.wall_ms, 1)} ms` : "") +
        (side.kernel_ms > 0 ? ` (kernels ${short(side.kernel_ms, 1)} ms)` : "");
    }
    await drawBase64($("canvas-compare-diff"), r.diff_png);
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
};

function stripImages(r) {
  return JSON.parse(JSON.stringify(r, (k, v) => (typeof v === "string" && v.length > 512 ? `(${v.length} characters)` : v)));
}

async function drawBase64(canvas, b64) {
  const ctx = canvas.getContext("2d");
  if (!b64) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    return;
  }
  const bitmap = await createImageBitmap(new Blob([fromBase64(b64)], { type: "image/png" }));
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  ctx.drawImage(bitmap, 0, 0);
}

// MARK: Views, tabs and links

const views = { fractal: fractalView, rtow: rtowView, mist: mistView, pulse: pulseView, iso: isoView, compare: compareView };
let activeView = "fractal";

/** Shows a view; one shown for the first time renders itself unless `render` is false. */
function showView(name, render = true) {
  if (!views[name]) name = "fractal";
  activeView = name;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.view === name);
  for (const s of document.querySelectorAll("main .view")) s.classList.toggle("active", s.dataset.view === name);
  for (const c of document.querySelectorAll(`#view-${name} .stage > canvas`)) fitCanvas(c);
  showStatus();
  if (!ready || !render) return;
  if ((name === "fractal" || name === "rtow") && !lastFrame[name] && !current[name]) views[name].send(true);
  if (name === "compare" && $("compare-from").value !== "custom") compareView.fill();
  if (name === "fractal" && JULIA_TYPES.has(fractalView.formula)) fractalView.showInset();
}

/** The view in the address (without a history entry): #fractal=ARGS, #rtow=ARGS, #mist, ... */
function setHash(view, args) {
  if (view !== activeView) return;
  const text = "#" + view + (args ? "=" + encodeURIComponent(args.join(" ")) : "");
  if (location.hash !== text) history_.replaceState(null, "", text);
}
const history_ = window.history;

/** Applies the address's view; true when it asked for a render. */
function applyHash() {
  const h = decodeURIComponent(location.hash.replace(/^#/, ""));
  if (!h) return false;
  const eq = h.indexOf("=");
  const name = eq < 0 ? h : h.slice(0, eq);
  if (!views[name]) return false;
  const words = eq < 0 ? null : splitWords(h.slice(eq + 1));
  try {
    if (words && (name === "fractal" || name === "rtow")) {
      views[name].fromArgs(words);
      views[name].syncControls();
    }
  } catch (e) {
    notify("the link's view: " + e.message);
  }
  const rendering = !!words && ready && (name === "fractal" || name === "rtow");
  showView(name, !rendering);
  if (rendering) {
    views[name].send(true);
    return true;
  }
  return false;
}

async function loadInfo() {
  try {
    const res = await fetch("/api/info");
    if (!res.ok) throw new Error(await failure(res));
    info = await res.json();
  } catch (e) {
    notify("server info: " + e.message);
    info = {};
  }
  const devices = deviceList(info);
  const fallback = info.default_device || info.device || info.defaultDevice || (devices[0] && devices[0].id) || "";
  for (const id of ["device", "compare-a", "compare-b"]) {
    const sel = $(id);
    sel.textContent = "";
    for (const d of devices) sel.add(new Option(d.label, d.id));
  }
  if (fallback && ![...$("device").options].some((o) => o.value === fallback)) $("device").add(new Option(fallback, fallback), 0);
  $("device").value = fallback;
  $("compare-a").value = devices.some((d) => d.id === "cpu") ? "cpu" : fallback;
  const opencl = devices.find((d) => d.id.startsWith("opencl"));
  $("compare-b").value = opencl ? opencl.id : fallback;
  $("version").textContent = info.version ? "glint " + info.version : "";
}

/** The devices of /api/info as [{id, label}]. */
function deviceList(i) {
  const raw = i.devices || [];
  const out = [];
  for (const d of raw) {
    if (typeof d === "string") out.push({ id: d, label: d });
    else if (d && typeof d === "object") {
      const id = d.id || d.device || d.choice || d.name;
      if (!id) continue;
      const label = d.name && d.name !== id ? `${id}: ${d.name}` : id;
      out.push({ id, label });
    }
  }
  if (!out.some((d) => d.id === "cpu")) out.unshift({ id: "cpu", label: "cpu" });
  return out;
}

// MARK: The read-only hook for tests and scripts

const copy = (x) => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));

window.glint = Object.freeze({
  get ready() { return ready && conn.open; },
  get info() { return copy(info); },
  get activeView() { return activeView; },
  get lastFrame() { return copy(lastFrame); },
  get current() { return copy(current); },
  get errors() { return errors.slice(); },
  get sent() { return copy(sent); },
  get lastPicture() { return copy(lastPicture); },
  get lastCompare() { return copy(lastCompare); },
  get location() { return locationText; },
  /** The pictures uploaded from the mist and iso views (upload:ID), null before any. */
  get uploads() { return { mist: mistView.uploadId, iso: isoView.uploadId, texture: fractalView.texture }; },
  /** The last PNG received for a view, as base64 (null before any). */
  lastPNG(view) { return pngs[view] || null; },
  /** The view's latencies: [{id, stage, latencyMs, sinceRequestMs, wallMs}]. */
  history(view) { return copy(history[view] || []); },
  /** The command-line options the view renders now. */
  args(view) { return views[view] && views[view].args ? views[view].args() : null; },
  /** The view's picture as a short hash of its canvas's pixels. */
  canvasHash(view) { const c = $("canvas-" + view); return c ? canvasHash(c) : null; },
  /** Whether the view's newest request has finished (its "done" came). */
  isDone(view) { const r = conn.requests.get(current[view]); return !!(r && r.done); },
  /** The view's newest request's error, if it failed. */
  requestError(view) { const r = conn.requests.get(current[view]); return r && r.error ? r.error : null; },
});

// MARK: Start

function start() {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.onclick = () => {
      showView(b.dataset.view);
      const v = views[b.dataset.view];
      if (b.dataset.view === "fractal" || b.dataset.view === "rtow") setHash(b.dataset.view, v.args());
      else setHash(b.dataset.view, null);
    };
  }
  fractalView.init();
  rtowView.init();
  mistView.init();
  pulseView.init();
  isoView.init();
  compareView.init();
  $("device").onchange = () => {
    fractalView.inset.stale = true;
    if (activeView === "fractal" || activeView === "rtow") views[activeView].send(true);
  };
  window.addEventListener("resize", () => {
    for (const c of document.querySelectorAll(".view.active .stage > canvas")) fitCanvas(c);
    fractalView.redraw();
  });
  window.addEventListener("hashchange", () => applyHash());
  connect();
  loadInfo().then(() => {
    ready = true;
    if (!applyHash()) showView(activeView);
  });
  showView(decodeURIComponent(location.hash.replace(/^#/, "")).split("=")[0] || "fractal");
}

document.addEventListener("DOMContentLoaded", start);

})();
