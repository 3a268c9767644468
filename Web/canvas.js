// The canvases: sizes, pointer positions, pictures decoded in order.

import { notify, parseSize } from "./util.js";
import { current, state } from "./state.js";

// MARK: Canvases

/** Sizes a canvas to the largest box with its aspect ratio that fits its stage (whole CSS pixels). */
export function fitCanvas(canvas) {
  const stage = canvas.parentElement;
  const aw = Math.max(1, stage.clientWidth - 16), ah = Math.max(1, stage.clientHeight - 16);
  const scale = Math.min(aw / canvas.width, ah / canvas.height);
  // (The epsilon keeps a picture made for the stage at its exact size: 2w·(w/2w) may round below w.)
  const w = Math.max(1, Math.floor(canvas.width * scale + 1e-6)), h = Math.max(1, Math.floor(canvas.height * scale + 1e-6));
  canvas.style.width = w + "px";
  canvas.style.height = h + "px";
  canvas.cssW = w;
  canvas.cssH = h;
}

/**
 * The size in pixels of a picture that fills `canvas`'s stage at the device's pixel ratio times
 * `quality` (the header's resolution menu), scaled down to `maxPixels` when over it; null while
 * the stage is hidden. At quality 1 the canvas's pixels are then the screen's.
 */
export function stageSize(canvas, quality, maxPixels) {
  const stage = canvas.parentElement;
  if (!stage || stage.clientWidth === 0 || stage.clientHeight === 0) return null;
  const cw = Math.max(16, stage.clientWidth - 16), ch = Math.max(16, stage.clientHeight - 16);
  let s = (window.devicePixelRatio || 1) * quality;
  if (maxPixels > 0 && cw * ch * s * s > maxPixels) s = Math.sqrt(maxPixels / (cw * ch));
  return { w: Math.max(8, Math.floor(cw * s)), h: Math.max(8, Math.floor(ch * s)) };
}

/** The header's resolution menu: the fraction of the screen's pixels an auto-sized view renders. */
export function resolution() {
  const q = parseFloat(document.getElementById("resolution").value);
  return q > 0 && q <= 1 ? q : 1;
}

/** The server's pixel limit (/api/info), or none before the page knows it. */
function maxPixels() {
  const limits = state.info && state.info.limits;
  return limits && limits.max_pixels > 0 ? limits.max_pixels : 0;
}

/** "auto", or a size WxH; null for anything else. */
export function parseSizeOrAuto(text) {
  return text.trim().toLowerCase() === "auto" ? "auto" : parseSize(text);
}

/**
 * What a view whose size can follow its stage shares (fractal, rtow): with `autoSize` its --size
 * is the stage's at the screen's resolution (stageSize), re-taken before each render, on resize
 * and when the view is shown; a size typed or linked pins it.
 */
export const autoSizing = {
  autoSize: true,
  autoSizes: null,          // the sizes this view rendered at auto: a link or Back to one stays auto
  autoPixelCap: 0,          // the view's own bound on an auto size (0: the server's only)

  /** Takes the stage's size for an auto-sized view; true when it changed. */
  refreshSize() {
    if (!this.autoSize || !this.canvas) return false;
    const cap = Math.min(...[maxPixels(), this.autoPixelCap].filter((n) => n > 0));
    const s = stageSize(this.canvas, resolution(), Number.isFinite(cap) ? cap : 0);
    if (!s) return false;
    (this.autoSizes || (this.autoSizes = new Set())).add(`${s.w}x${s.h}`);
    if (s.w === this.size.w && s.h === this.size.h) return false;
    this.size = s;
    return true;
  },

  sizeText() { return this.autoSize ? "auto" : `${this.size.w}x${this.size.h}`; },

  /** The size field's value: "auto" or WxH. */
  takeSize(value) {
    this.autoSize = value === "auto";
    if (value !== "auto") this.size = value;
    else this.refreshSize();
  },

  /** A link's --size (null: none given): a link without one, or with a size this view rendered
   *  at auto (its own link, Back or Forward to it), stays auto; any other size is pinned. */
  takeLinkSize(given) {
    if (given) this.refreshSize();   // the stage's size now counts as one of auto's
    this.autoSize = !given || (!!this.autoSizes && this.autoSizes.has(`${given.w}x${given.h}`));
    if (given) this.size = given;
    else this.refreshSize();
  },
};

export function setCanvasSize(canvas, w, h) {
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    fitCanvas(canvas);
  }
}

/** A pointer's position on a canvas in whole CSS pixels. */
export function pointerAt(canvas, e) {
  const r = canvas.getBoundingClientRect();
  return { x: Math.round(e.clientX - r.left), y: Math.round(e.clientY - r.top) };
}

/** A short hash of a canvas's pixels (for the tests: "did the picture change"). */
export function canvasHash(canvas) {
  const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data[i], 0x01000193);
  return (h >>> 0).toString(16) + ":" + canvas.width + "x" + canvas.height;
}

/** What every view that shows pictures starts with: its canvas (found by its init), its pictures
 *  decoded in arrival order, an empty status line and no live job (a view that runs one has its
 *  own setLive). */
export function pictureView() {
  return { canvas: null, decode: decoder(), status: "", live: false, setLive() {} };
}

/** Draws a frame of `req` on `view`'s canvas, sized to the frame (or to `size`, a smaller
 *  preview then drawn scaled), unless a newer request of the
 *  view has superseded it by the time it is decoded; `clear` first for a picture with alpha. */
export function drawFrame(view, record, blob, req, clear = false, size = null) {
  view.decode(blob, (bitmap) => {
    if (current[req.view] !== req.id) return;
    // Sized as it is drawn: a canvas resized on arrival would show blank until the decode.
    setCanvasSize(view.canvas, size ? size.w : record.width, size ? size.h : record.height);
    const ctx = view.canvas.getContext("2d");
    if (clear) ctx.clearRect(0, 0, view.canvas.width, view.canvas.height);
    ctx.drawImage(bitmap, 0, 0, view.canvas.width, view.canvas.height);
  });
}

/** Decodes pictures one after another so that they are drawn in arrival order. */
export function decoder() {
  let chain = Promise.resolve();
  return (blob, draw) => {
    chain = chain.then(() => createImageBitmap(blob)).then(draw).catch((e) => notify("could not decode a picture: " + e.message));
  };
}
