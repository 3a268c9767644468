// The zoom video of the fractal view: from zoom 1 to the view's zoom at its centre, made by the
// server (POST /api/zoomvideo: one exponential-map strip, then every frame resampled from it)
// while the dialog polls its progress; cancellable, downloaded when done. Methods of fractalView
// (fractal.js), which takes them in.

import { $, notify, parseSize, shellWord } from "./util.js";
import { failure, postJSON } from "./conn.js";

/** How often the dialog asks for the job's progress, in ms. */
const POLL_MS = 250;

export const fractalVideo = {
  video: { id: null, timer: null },

  initVideo() {
    $("fractal-zoomvideo").onclick = () => this.openVideo();
    $("zoomvideo-start").onclick = () => this.startVideo();
    $("zoomvideo-cancel").onclick = () => this.cancelVideo();
    $("zoomvideo-close").onclick = () => $("zoomvideo-dialog").close();
    for (const id of ["zoomvideo-size", "zoomvideo-seconds", "zoomvideo-fps", "zoomvideo-columns"]) {
      $(id).addEventListener("input", () => { if (!this.video.id) this.showVideoCommands(); });
    }
  },

  /** The view's arguments for its video: auto's iterations replaced by the count the server
   *  found for the picture shown (the "found N" beside the field), so that the video's colours
   *  are the picture's. */
  videoArgs() {
    const args = this.args();
    const at = args.lastIndexOf("--iterations");
    if (at >= 0 && args[at + 1] === "auto" && this.chosen) args[at + 1] = String(this.chosen);
    return args;
  },

  /** The dialog's settings, checked as the server checks them; null (and a message) if not. */
  videoSettings() {
    const size = parseSize($("zoomvideo-size").value);
    const seconds = Number($("zoomvideo-seconds").value), fps = Number($("zoomvideo-fps").value);
    const columns = Number($("zoomvideo-columns").value);
    if (!size || size.w < 16 || size.h < 16 || size.w > 1920 || size.h > 1920) return this.videoProblem("size: WxH, sides 16 to 1920, e.g. 640x360");
    if (!(seconds >= 0.1 && seconds <= 120)) return this.videoProblem("seconds: 0.1 to 120");
    if (!(fps >= 1 && fps <= 60)) return this.videoProblem("fps: 1 to 60");
    if (!(Number.isInteger(columns) && columns >= 64 && columns <= 4096)) return this.videoProblem("strip columns: a whole number from 64 to 4096");
    const frames = Math.round(seconds * fps);
    if (frames < 2) return this.videoProblem("a zoom video has at least 2 frames: more seconds or fps");
    return { size: `${size.w}x${size.h}`, seconds, fps, columns, frames };
  },

  videoProblem(text) {
    $("zoomvideo-status").textContent = text;
    return null;
  },

  /** The two command lines that make the same video (the server's own once it answers). */
  showVideoCommands(commands) {
    if (!commands) {
      const s = this.videoSettings();
      if (!s) return;
      const args = this.videoArgs().filter((w, i, a) => w !== "--size" && a[i - 1] !== "--size");
      commands = [
        ["glint", "fractal", ...args, "--exp-map", String(s.columns), "-o", "strip.png"].map(shellWord).join(" "),
        ["glint", "zoomvideo", "strip.png", "--size", s.size, "--fps", String(s.fps), "--frames", String(s.frames), "--video", "zoom.mp4"].map(shellWord).join(" "),
      ];
    }
    $("zoomvideo-cli").value = commands.join("\n");
  },

  openVideo() {
    const zoom = $("fractal-zoom").value;
    $("zoomvideo-what").textContent = `From zoom 1 to ${zoom} at the view's centre` +
      (this.iterations === "auto" && this.chosen ? `, ${this.chosen} iterations (found for this view)` : "");
    if (!this.video.id) {
      $("zoomvideo-status").textContent = "";
      this.showVideoCommands();
    }
    $("zoomvideo-dialog").showModal();
  },

  setVideoRunning(running) {
    $("zoomvideo-start").disabled = running;
    $("zoomvideo-cancel").disabled = !running;
    for (const id of ["zoomvideo-size", "zoomvideo-seconds", "zoomvideo-fps", "zoomvideo-columns"]) $(id).disabled = running;
  },

  async startVideo() {
    const s = this.videoSettings();
    if (!s) return;
    const link = $("zoomvideo-download");
    link.classList.add("hidden");
    link.removeAttribute("href");
    $("zoomvideo-progress").value = 0;
    const body = { workload: "fractal", args: this.videoArgs(), size: s.size, seconds: s.seconds, fps: s.fps, columns: s.columns };
    const device = $("device").value;
    if (device) body.device = device;
    this.setVideoRunning(true);
    $("zoomvideo-status").textContent = "starting…";
    try {
      const res = await postJSON("/api/zoomvideo", body);
      if (!res.ok) throw new Error(await failure(res));
      const job = await res.json();
      this.video.id = job.id;
      this.showVideoProgress(job);
      this.pollVideo();
    } catch (e) {
      this.setVideoRunning(false);
      $("zoomvideo-status").textContent = e.message;
      notify("zoom video: " + e.message);
    }
  },

  pollVideo() {
    clearTimeout(this.video.timer);
    this.video.timer = setTimeout(async () => {
      const id = this.video.id;
      if (!id) return;
      try {
        const res = await fetch(`/api/zoomvideo/${id}`, { cache: "no-store" });
        if (!res.ok) throw new Error(await failure(res));
        const job = await res.json();
        if (this.video.id !== id) return;
        this.showVideoProgress(job);
        if (job.state === "done" || job.state === "failed" || job.state === "cancelled") this.endVideo(job);
        else this.pollVideo();
      } catch (e) {
        if (this.video.id !== id) return;
        this.endVideo({ state: "failed", error: e.message });
      }
    }, POLL_MS);
  },

  showVideoProgress(job) {
    $("zoomvideo-progress").value = job.progress || 0;
    const what = {
      waiting: "waiting for a render slot",
      iterations: "finding the iterations",
      strip: `rendering the strip (${job.columns} columns)`,
      frames: `frame ${job.frame} of ${job.frames}`,
      done: `done: ${job.frames} frames, ${job.bytes} bytes` + (job.wall_s ? ` in ${job.wall_s} s` : ""),
      cancelled: "cancelled",
      failed: "failed: " + job.error,
    }[job.state] || job.state;
    $("zoomvideo-status").textContent = what;
    if (job.commands) this.showVideoCommands(job.commands);
  },

  endVideo(job) {
    clearTimeout(this.video.timer);
    this.video.id = null;
    this.setVideoRunning(false);
    $("zoomvideo-status").textContent = job.state === "done" ? $("zoomvideo-status").textContent
      : job.state === "cancelled" ? "cancelled" : "failed: " + job.error;
    if (job.state === "done") {
      const link = $("zoomvideo-download");
      link.href = job.download;
      link.download = job.file;
      link.textContent = `Download ${job.format === "mp4" ? "video" : "frames (tar)"}`;
      link.classList.remove("hidden");
    } else if (job.state === "failed") {
      notify("zoom video: " + job.error);
    }
  },

  async cancelVideo() {
    const id = this.video.id;
    if (!id) return;
    clearTimeout(this.video.timer);
    try {
      const res = await fetch(`/api/zoomvideo/${id}`, { method: "DELETE" });
      if (!res.ok) throw new Error(await failure(res));
      this.endVideo(await res.json());
    } catch (e) {
      this.endVideo({ state: "failed", error: e.message });
    }
  },
};
