// The misty window: a live job on the last picture, an uploaded one or the camera, wiped with
// the pointer.

import { $, notify, parseSize, readFieldOptions, short } from "./util.js";
import { drawFrame, pictureView, pointerAt } from "./canvas.js";
import { request, sendControl, setHash, sourcePart, stopLive, uploadOnPick } from "./conn.js";
import { conn, sent, state } from "./state.js";

/** The fields and their options, with the command's defaults (for a link that leaves one out;
 *  the page itself starts at sigma 20 and always writes it). */
const FIELDS = [["mist-drops", "--drops", "50"], ["mist-sigma", "--sigma", "40", true], ["mist-seed", "--seed", "0"]];

export const mistView = {
  ...pictureView(),
  uploadId: null,
  gravity: { x: 0, y: 1 },  // as drawn on the pad (within the unit square)
  gravityText: "0,1",       // as given: the pad's hundredths, or a link's numbers exactly
  extra: [],                // options from a link that the controls do not show
  stroke: null,            // the wipe being drawn: points not yet sent
  strokeTimer: null,
  camera: null,            // {stream, timer, canvas, w, h}

  init() {
    this.canvas = $("canvas-mist");
    const c = this.canvas;
    $("mist-source").onchange = () => this.syncControls();
    uploadOnPick("mist-file", "upload", (u) => {
      this.uploadId = u.id;
      notify(`uploaded ${u.width}x${u.height}`, "info");
    });
    $("mist-start").onclick = () => this.start();
    $("mist-stop").onclick = () => stopLive(this);
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
    this.gravityText = `${short(this.gravity.x, 2)},${short(this.gravity.y, 2)}`;
    $("mist-gravity-value").textContent = this.gravityText;
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
    const a = ["--drops", $("mist-drops").value.trim(), "--sigma", $("mist-sigma").value.trim(), "--gravity", this.gravityText];
    const seed = $("mist-seed").value.trim();
    if (seed && seed !== "0") a.push("--seed", seed);
    if ($("mist-classic").checked) a.push("--classic");
    // Misted from the start, so that a wipe shows at once however slowly the frames come.
    if ($("mist-fogged").checked) a.push("--fogged");
    return a.concat(this.extra);
  },

  /** The link: the options, and the view whose picture the mist is on (none for an upload or the camera). */
  link() { return { args: this.args(), more: sourcePart($("mist-source").value === "render") }; },

  /** Takes a link's options into the controls; what the link leaves out is the default. */
  fromArgs(words) {
    let gravity = null, classic = false, fogged = false;
    this.extra = readFieldOptions(words, FIELDS, (w, value) => {
      if (w === "--classic") { classic = true; return true; }
      if (w === "--fogged") { fogged = true; return true; }
      if (w === "--gravity") {
        const text = value().trim(), m = /^([-+]?[0-9.eE+-]+),([-+]?[0-9.eE+-]+)$/.exec(text);
        const x = m ? Number(m[1]) : NaN, y = m ? Number(m[2]) : NaN;
        if (!Number.isFinite(x) || !Number.isFinite(y) || (x === 0 && y === 0) || Math.abs(x) > 1e6 || Math.abs(y) > 1e6) {
          throw new Error("--gravity: X,Y, numbers within +-1e6, not both 0");
        }
        gravity = { text, x, y };
        return true;
      }
      return false;
    });
    $("mist-classic").checked = classic;
    $("mist-fogged").checked = fogged;
    const g = gravity || { text: "0,1", x: 0, y: 1 };
    const m = Math.max(Math.abs(g.x), Math.abs(g.y));
    this.gravity = { x: g.x / m, y: g.y / m };
    this.gravityText = g.text;
    $("mist-gravity-value").textContent = g.text;
    this.drawGravity();
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
      if (!state.lastPicture) notify("no picture rendered yet on this connection: render a view first", "info");
      message.source = "render";
    }
    request("mist", message);
    const l = this.link();
    setHash("mist", l.args, true, l.more);
    this.setLive(true);
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

  showFrame(record, blob, req) { drawFrame(this, record, blob, req); },
};
