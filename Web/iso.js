// Iso: `glint iso` of the last picture rendered on this connection, or of an uploaded one.

import { $, notify, readFieldOptions, shellWord } from "./util.js";
import { drawFrame, pictureView } from "./canvas.js";
import { request, setHash, sourcePart, uploadOnPick } from "./conn.js";
import { state } from "./state.js";

/** The fields and their options, with the command's defaults. */
const FIELDS = [["iso-depth", "--depth", "20", true], ["iso-radius", "--corner-radius", "0", true], ["iso-ss", "--ss", "4"]];

export const isoView = {
  ...pictureView(),
  uploadId: null,

  init() {
    this.canvas = $("canvas-iso");
    $("iso-source").onchange = () => this.syncControls();
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

  extra: [],               // options from a link that the fields do not show

  args() {
    const a = [this.input() || "upload:last"];
    for (const [id, option, fallback] of FIELDS) {
      const value = $(id).value.trim();
      if (value !== fallback) a.push(option, value);
    }
    return a.concat(this.extra);
  },

  /** The link: the options (the picture is the link's source part, or an upload it cannot carry). */
  link() { return { args: this.args().slice(1), more: sourcePart($("iso-source").value === "last") }; },

  /** Takes a link's options into the fields; what the link leaves out is the command's default. */
  fromArgs(words) {
    this.extra = readFieldOptions(words, FIELDS);
    this.syncCLI();
  },

  syncControls() {
    $("iso-file-row").classList.toggle("hidden", $("iso-source").value !== "upload");
    this.syncCLI();
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
    const l = this.link();
    setHash("iso", l.args, true, l.more);
  },

  showFrame(record, blob, req) { drawFrame(this, record, blob, req, true); },
};
