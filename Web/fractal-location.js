// The fractal view's location: each formula's centre, and the exact arithmetic (decimal.js)
// that pans and zooms the view. Methods of fractalView (fractal.js), which takes them in.

import { divRound, p10, rescale, sameZoom, scaleZoom, zoomExponent } from "./decimal.js";

export const FORMULA_CENTERS = {
  "mandelbrot": "-0.75,0", "burning-ship": "-0.45,-0.5", "julia": "0,0", "sierpinski-julia": "0,0", "image-julia": "0,0",
};
export const JULIA_TYPES = new Set(["julia", "sierpinski-julia", "image-julia"]);
export const DEFAULT_C = "-0.76,0.15";

export const fractalLocation = {
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

  /** Moves the centre by `nx` tenths of the view's width and `ny` tenths of its height (up):
   *  the arrow keys' pan, exact like a drag's. */
  panTenths(nx, ny) {
    const { w, h } = this.size;
    this.setDigits(this.neededDigits());
    const re = this.center.re + this.planeOffset(BigInt(nx * w), 10n);
    const im = this.center.im + this.planeOffset(BigInt(ny * h), 10n);
    this.center = { re, im, d: this.center.d };
    this.shown.tx -= nx * w / 10;   // display only: the picture moves against the view
    this.shown.ty += ny * h / 10;
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

  /** Zooms by num/den about the view's centre, which stays exactly the same decimal (a pixel's
   *  middle, as zoomAt's anchor, would move it half a pixel when the width is odd). */
  zoomCentred(num, den) {
    const old = this.zoom;
    const zoom = scaleZoom(old, num, den);
    if (sameZoom(zoom, old)) return;
    this.zoom = zoom;
    this.setDigits(Math.max(this.center.d, this.neededDigits(zoom)));
    const f = Number(num) / Number(den), px = this.size.w / 2, py = this.size.h / 2;   // display only
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
};
