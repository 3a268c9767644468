// Iso: `glint iso` of the last picture rendered on this connection, or of an uploaded one.

import { $, notify, shellWord } from "./util.js";
import { drawFrame, pictureView } from "./canvas.js";
import { request, uploadOnPick } from "./conn.js";
import { state } from "./state.js";

export const isoView = {
  ...pictureView(),
  uploadId: null,

  init() {
    this.canvas = $("canvas-iso");
    $("iso-source").onchange = () => {
      $("iso-file-row").classList.toggle("hidden", $("iso-source").value !== "upload");
      this.syncCLI();
    };
    uploadOnPick("iso-file", "upload", (u) => {
      this.uploadId = u.id;
      notify(`uploaded ${u.width}x${u.height}`, "info");
      this.syncCLI();
    });
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

  showFrame(record, blob, req) { drawFrame(this, record, blob, req, true); },
};
