// The fractal view's gestures (drag, pinch, wheel, Julia's c with ctrl or the right button) and
// the last picture drawn moved with them until the new one comes. Methods of fractalView
// (fractal.js), which takes them in.

import { isqrt, p10 } from "./decimal.js";
import { pointerAt } from "./canvas.js";
import { JULIA_TYPES } from "./fractal-location.js";

export const fractalGestures = {
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
};
