// The fractal view's location as files and pasted text: Save PNG (the PNG `glint fractal -o`
// writes, its view record in it), Save .kfr, and loading a .kfr, a Glint PNG or pasted text
// (read by the server's own location readers, POST /api/view). Methods of fractalView
// (fractal.js), which takes them in.

import { $, notify, parseSize } from "./util.js";
import { failure, postJSON } from "./conn.js";
import { parsePoint, parseZoom } from "./decimal.js";
import { FORMULA_CENTERS } from "./fractal-location.js";

/** Offers `blob` as a download named `name`. */
function download(blob, name) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The download has its own copy once started; the address is let go a little later.
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

/** Options the page keeps among a view's extra ones: set from a location, replaced there. */
const EXTRA_FIELDS = { power: "--power", bailout: "--bailout", light: "--light", precision: "--precision" };

export const fractalFile = {
  initFile() {
    $("fractal-save-png").onclick = () => this.savePNG();
    $("fractal-save-kfr").onclick = () => this.saveKFR();
    $("fractal-open").onchange = (e) => {
      const f = e.target.files[0];
      e.target.value = "";
      if (f) this.openFile(f);
    };
    const stage = $("stage-fractal");
    stage.addEventListener("dragover", (e) => {
      if (![...e.dataTransfer.types].includes("Files")) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = "copy";
    });
    stage.addEventListener("drop", (e) => {
      const f = e.dataTransfer.files[0];
      if (!f) return;
      e.preventDefault();
      this.openFile(f);
    });
    // Any location form pasted into the centre field is read whole and shown at once: an input
    // would drop a .kfr's line ends, so the clipboard's text is taken before it lands there.
    $("fractal-center").addEventListener("paste", (e) => {
      const text = e.clipboardData ? e.clipboardData.getData("text") : "";
      if (!text) return;
      e.preventDefault();
      if (parsePoint(text)) {
        // A bare centre: the view moves there at its zoom.
        $("fractal-center").value = text.trim();
        this.go();
      } else {
        this.openText(text);
      }
    });
  },

  /** The view's arguments for a file: with `--iterations auto`, the count found for the
   *  picture shown, so the file is the picture (null while none has been found yet). */
  fileArgs() {
    const args = this.args();
    const at = args.lastIndexOf("--iterations");
    if (at >= 0 && args[at + 1] === "auto") {
      if (!this.chosen) return null;
      args[at + 1] = String(this.chosen);
    }
    return args;
  },

  async savePNG() {
    try {
      // Without a count found yet, the server finds it, as glint fractal --iterations auto does.
      const args = this.fileArgs() || this.args();
      const body = { workload: "fractal", args, record: true };
      const device = $("device").value;
      if (device) body.device = device;
      const res = await postJSON("/api/render", body);
      if (!res.ok) throw new Error(await failure(res));
      download(await res.blob(), `${this.formula}.png`);
    } catch (e) {
      notify("save PNG: " + e.message);
    }
  },

  async saveKFR() {
    try {
      const args = this.fileArgs();
      if (!args) throw new Error("the iteration count is still being found: save once the picture is shown");
      const res = await postJSON("/api/location", { workload: "fractal", args });
      if (!res.ok) throw new Error(await failure(res));
      download(new Blob([await res.text()], { type: "text/plain" }), `${this.formula}.kfr`);
    } catch (e) {
      notify("save .kfr: " + e.message);
    }
  },

  async openFile(file) {
    await this.openLocation(file, file.name);
  },

  async openText(text) {
    await this.openLocation(new Blob([text], { type: "text/plain; charset=utf-8" }), "pasted text");
  },

  /** Reads a location (a file's bytes, or text) on the server and shows its view. */
  async openLocation(body, what) {
    try {
      const res = await fetch("/api/view", { method: "POST", headers: { "Content-Type": "application/octet-stream" }, body });
      if (!res.ok) throw new Error(await failure(res));
      this.applyView(await res.json());
      this.resetShown();
      this.send(true);
    } catch (e) {
      notify(`location (${what}): ${e.message}`);
    }
  },

  /** Takes the fields a location gives (/api/view's answer); the others stay as they are. */
  applyView(v) {
    const center = v.center ? parsePoint(v.center) : null, zoom = v.zoom ? parseZoom(v.zoom) : null;
    const c = v.c ? parsePoint(v.c) : null, size = v.size ? parseSize(v.size) : null;
    if ((v.center && !center) || (v.zoom && !zoom) || (v.c && !c) || (v.size && !size)) throw new Error("the server's answer is not a view");
    if (v.formula && v.formula !== this.formula) {
      this.formula = v.formula;
      if (!center) this.center = parsePoint(FORMULA_CENTERS[this.formula]);
    }
    if (center) this.center = center;
    if (zoom) this.zoom = zoom;
    if (c) this.c = c;
    if (size) this.takeLinkSize(size);
    if (v.iterations) this.iterations = v.iterations;
    if (v.palette) this.palette = v.palette;
    if (v.smooth !== undefined) this.smooth = v.smooth;
    if (v.color) this.colouring = v.color;
    if (v.ss) this.ss = v.ss;
    // A Glint record is the whole view: options it leaves out are at their defaults.
    const whole = v.kind !== "options" && !!v.formula;
    for (const [key, option] of Object.entries(EXTRA_FIELDS)) {
      if (v[key] === undefined && !whole) continue;
      const extra = [];
      for (let i = 0; i < this.extra.length; i++) {
        if (this.extra[i] === option) { i++; continue; }
        if (this.extra[i].startsWith(option + "=")) continue;
        extra.push(this.extra[i]);
      }
      // Mandelbrot's power 2 is the default, named by no option.
      if (v[key] !== undefined && !(key === "power" && v.power === 2)) extra.push(option, String(v[key]));
      this.extra = extra;
    }
  },
};
