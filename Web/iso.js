// Iso: `glint iso` of the last picture rendered on this connection, or of an uploaded one.

import { $, notify, shellWord } from "./util.js";
import { decoder, setCanvasSize } from "./canvas.js";
import { request, upload } from "./conn.js";
import { current, state } from "./state.js";

export const isoView = {
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
    $("iso-last").textContent = state.lastPicture
      ? `the current view: ${state.lastPicture.view}, ${state.lastPicture.width}x${state.lastPicture.height}`
      : "nothing rendered yet";
  },

  apply() {
    if ($("iso-source").value === "upload" && !this.uploadId) { notify("pick a picture to upload first"); return; }
    if ($("iso-source").value === "last" && !state.lastPicture) { notify("render a view first: iso applies to the last picture"); return; }
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
