// The canvases: sizes, pointer positions, pictures decoded in order.

import { notify } from "./util.js";
import { current } from "./state.js";

// MARK: Canvases

/** Sizes a canvas to the largest box with its aspect ratio that fits its stage (whole CSS pixels). */
export function fitCanvas(canvas) {
  const stage = canvas.parentElement;
  const aw = Math.max(1, stage.clientWidth - 16), ah = Math.max(1, stage.clientHeight - 16);
  const scale = Math.min(aw / canvas.width, ah / canvas.height);
  const w = Math.max(1, Math.floor(canvas.width * scale)), h = Math.max(1, Math.floor(canvas.height * scale));
  canvas.style.width = w + "px";
  canvas.style.height = h + "px";
  canvas.cssW = w;
  canvas.cssH = h;
}

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

/** Draws a frame of `req` on `view`'s canvas, sized to the frame, unless a newer request of the
 *  view has superseded it by the time it is decoded; `clear` first for a picture with alpha. */
export function drawFrame(view, record, blob, req, clear = false) {
  setCanvasSize(view.canvas, record.width, record.height);
  view.decode(blob, (bitmap) => {
    if (current[req.view] !== req.id) return;
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
