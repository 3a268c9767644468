// The pulse: a live `glint pulse`, restarted when a control moves.

import { $, linkSize, notify, parseSize, readOptions, shellWord, short } from "./util.js";
import { drawFrame, pictureView } from "./canvas.js";
import { request, setHash, stopLive } from "./conn.js";

/** The sliders and their options: a link's value is kept exactly, the slider shows it rounded. */
const SLIDERS = [["pulse-hue", "pulse-hue-value", "--hue"], ["pulse-center", "pulse-center-value", "--purity-center"],
  ["pulse-range", "pulse-range-value", "--purity-range"]];
const DEFAULTS = { "--hue": "0", "--purity-center": "0.5", "--purity-range": "0.7" };
const DEFAULT_SIZE = "320x180";

export const pulseView = {
  ...pictureView(),
  restartTimer: null,

  values: { ...DEFAULTS },
  extra: [],               // options from a link that the controls do not show

  init() {
    this.canvas = $("canvas-pulse");
    for (const [id, out, option] of SLIDERS) {
      $(id).addEventListener("input", (e) => {
        $(out).textContent = e.target.value;
        this.values[option] = e.target.value;
        this.changed();
      });
    }
    $("pulse-size").onchange = () => this.changed();
    $("pulse-start").onclick = () => this.start();
    $("pulse-stop").onclick = () => stopLive(this);
    this.syncCLI();
  },

  args() {
    const size = parseSize($("pulse-size").value) || { w: 320, h: 180 };
    const a = ["--size", `${size.w}x${size.h}`];
    for (const [, , option] of SLIDERS) a.push(option, this.values[option]);
    return a.concat(this.extra);
  },

  link() { return { args: this.args() }; },

  /** Takes a link's options: the sliders' values (each from 0 to 1), the size and the rest; what
   *  the link leaves out is the command's default. */
  fromArgs(words) {
    const values = {};
    let size = null;
    const extra = readOptions(words, (w, value) => {
      if (w === "--size") { size = linkSize(value()); return true; }
      if (!SLIDERS.some(([, , option]) => option === w)) return false;
      const text = value(), x = Number(text);
      if (!/^\s*[-+0-9.eE]+\s*$/.test(text) || !(x >= 0 && x <= 1)) throw new Error(`${w}: a number from 0 to 1`);
      values[w] = text.trim();
      return true;
    });
    this.values = { ...DEFAULTS, ...values };
    this.extra = extra;
    $("pulse-size").value = size ? `${size.w}x${size.h}` : DEFAULT_SIZE;
    for (const [id, out, option] of SLIDERS) {
      $(id).value = this.values[option];
      $(out).textContent = this.values[option];
    }
    this.syncCLI();
  },

  syncCLI() {
    $("pulse-cli").value = ["glint", "pulse", ...this.args()].map(shellWord).join(" ") + " -o pulse";
  },

  /** A control moved: the live pulse restarts with it (at most ten times a second). */
  changed() {
    this.syncCLI();
    if (!this.live) { setHash("pulse", this.args()); return; }
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => this.start(false), 100);
  },

  /** Starts the live pulse; `entry`: its link is a history step of its own (a slider's moves are one). */
  start(entry = true) {
    if (!parseSize($("pulse-size").value)) { notify("size: WxH, e.g. 320x180"); return; }
    this.syncCLI();
    request("pulse", { type: "pulse", args: this.args() });
    setHash("pulse", this.args(), entry);
    this.setLive(true);
  },

  setLive(live) {
    this.live = live;
    $("pulse-start").disabled = live;
  },

  showFrame(record, blob, req) {
    drawFrame(this, record, blob, req);
    if (record.fps !== undefined) $("pulse-rate").textContent = `frame ${record.frame} · ${short(record.fps, 1)} fps · server ${short(record.wallMs, 1)} ms a frame`;
  },
};
