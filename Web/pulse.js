// The pulse: a live `glint pulse`, restarted when a control moves.

import { $, notify, parseSize, shellWord, short } from "./util.js";
import { drawFrame, pictureView } from "./canvas.js";
import { request, stopLive } from "./conn.js";

export const pulseView = {
  ...pictureView(),
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
    $("pulse-stop").onclick = () => stopLive(this);
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

  setLive(live) {
    this.live = live;
    $("pulse-start").disabled = live;
  },

  showFrame(record, blob, req) {
    drawFrame(this, record, blob, req);
    if (record.fps !== undefined) $("pulse-rate").textContent = `frame ${record.frame} · ${short(record.fps, 1)} fps · server ${short(record.wallMs, 1)} ms a frame`;
  },
};
