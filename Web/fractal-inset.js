// Julia's c picked on a small Mandelbrot set, rendered by the server. Methods of fractalView
// (fractal.js), which takes them in.

import { $, notify } from "./util.js";
import { decimalText, divRound, p10 } from "./decimal.js";
import { pointerAt } from "./canvas.js";
import { failure, postJSON } from "./conn.js";
import { state } from "./state.js";

export const fractalInset = {
  inset: { stale: true, loading: false, bitmap: null },
  INSET: { w: 192, h: 128, center: "-0.6,0" },

  async showInset() {
    const inset = this.inset;
    if (!inset.stale || inset.loading || !state.ready) { this.drawInset(); return; }
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
