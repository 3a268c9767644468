// Compare: one job on two devices, their pictures, the difference and the verdict against the
// workload's tolerance (POST /api/compare).

import { $, fromBase64, notify, now, shellWord, short, splitWords } from "./util.js";
import { failure, postJSON, setHash, showStatus } from "./conn.js";
import { state } from "./state.js";
import { fractalView } from "./fractal.js";
import { rtowView } from "./rtow.js";
import { pulseView } from "./pulse.js";

export const compareView = {
  live: false,
  status: "",
  running: false,
  setLive() {},
  showFrame() {},

  init() {
    $("compare-from").onchange = () => this.fill();
    $("compare-run").onclick = () => this.run();
  },

  /** The job's text from the chosen view. */
  fill() {
    const from = $("compare-from").value;
    if (from === "fractal") $("compare-args").value = ["fractal", ...fractalView.args()].map(shellWord).join(" ");
    else if (from === "rtow") $("compare-args").value = ["rtow", ...rtowView.args()].map(shellWord).join(" ");
    else if (from === "pulse") $("compare-args").value = ["pulse", ...pulseView.args(), "--frames", "30"].map(shellWord).join(" ");
  },

  /** The link: the job's words, and the two devices. */
  link() {
    const words = splitWords($("compare-args").value);
    return words.length ? { args: words, more: [["a", $("compare-a").value], ["b", $("compare-b").value]] } : { args: null };
  },

  /** Takes a link's job and devices (each one the server lists) into the fields. */
  fromLink(words, a, b) {
    for (const [id, value] of [["compare-a", a], ["compare-b", b]]) {
      if (value === undefined || value === null) continue;
      if (![...$(id).options].some((o) => o.value === value)) throw new Error(`device ${value}: not one of the server's (${[...$(id).options].map((o) => o.value).join(", ")})`);
      $(id).value = value;
    }
    $("compare-from").value = "custom";
    $("compare-args").value = words.map(shellWord).join(" ");
  },

  async run() {
    if (this.running) return;
    const words = splitWords($("compare-args").value);
    if (words.length === 0) { notify("compare: give a workload and its options"); return; }
    const body = { workload: words[0], args: words.slice(1), a: $("compare-a").value, b: $("compare-b").value };
    const l = this.link();
    setHash("compare", l.args, true, l.more);
    this.running = true;
    $("compare-run").disabled = true;
    $("compare-verdict").textContent = `running ${body.workload} on ${body.a} and ${body.b}…`;
    $("compare-verdict").className = "verdict";
    const t0 = now();
    try {
      const res = await postJSON("/api/compare", body);
      if (!res.ok) throw new Error(await failure(res));
      const result = await res.json();
      const ms = now() - t0;
      await this.show(result, body, ms);
      state.lastCompare = { ms: Math.round(ms), request: body, result: stripImages(result) };
      this.status = `compare ${body.workload}: ${body.a} vs ${body.b} · ${short(ms, 0)} ms`;
    } catch (e) {
      notify("compare: " + e.message);
      $("compare-verdict").textContent = "compare failed: " + e.message;
      $("compare-verdict").className = "verdict fail";
      state.lastCompare = { error: e.message, request: body };
      this.status = "compare: failed";
    } finally {
      this.running = false;
      $("compare-run").disabled = false;
      showStatus();
    }
  },

  async show(r, body, ms) {
    const sides = [["a", "canvas-compare-a", "compare-a-caption"], ["b", "canvas-compare-b", "compare-b-caption"]];
    for (const [key, canvasId, captionId] of sides) {
      const side = r[key] || {};
      await drawBase64($(canvasId), side.png);
      $(captionId).textContent = `${key.toUpperCase()}: ${side.device || body[key]}` +
        (typeof side.wall_ms === "number" ? ` · ${short(side.wall_ms, 1)} ms` : "") +
        (side.kernel_ms > 0 ? ` (kernels ${short(side.kernel_ms, 1)} ms)` : "");
    }
    await drawBase64($("canvas-compare-diff"), r.diff_png);
    $("compare-verdict").textContent = (r.passed ? "within tolerance" : "OUTSIDE tolerance") +
      (r.tolerance ? ` (${r.tolerance})` : "") + ` · ${short(ms, 0)} ms in all`;
    $("compare-verdict").className = "verdict " + (r.passed ? "pass" : "fail");
    this.table(r);
  },

  /** The figures: the difference, the speed-up and each criterion of the tolerance. */
  table(r) {
    const t = $("compare-table");
    t.textContent = "";
    const row = (cells, head = false) => {
      const tr = t.insertRow();
      for (const c of cells) {
        const cell = document.createElement(head ? "th" : "td");
        cell.textContent = c;
        tr.appendChild(cell);
      }
    };
    row(["largest difference", "mean difference", "PSNR dB", "pixels over 1 level", "speed-up of B over A"], true);
    row([short(r.max_abs, 3), short(r.mean_abs, 4), r.psnr_db === null || r.psnr_db === undefined ? "inf" : short(r.psnr_db, 2),
      String(r.pixels_over_threshold), r.speedup ? short(r.speedup, 2) + "x" : "–"]);
    for (const c of r.criteria || []) {
      const tr = t.insertRow();
      const cell = tr.insertCell();
      cell.colSpan = 5;
      cell.style.textAlign = "left";
      cell.textContent = (c.passed ? "ok   " : "FAIL ") + c.text;
    }
    if (r.command) {
      const cell = t.insertRow().insertCell();
      cell.colSpan = 5;
      cell.style.textAlign = "left";
      cell.className = "mono";
      cell.textContent = r.command.replace(/ -o view\.png$/, "");
    }
  },
};

function stripImages(r) {
  return JSON.parse(JSON.stringify(r, (k, v) => (typeof v === "string" && v.length > 512 ? `(${v.length} characters)` : v)));
}

async function drawBase64(canvas, b64) {
  const ctx = canvas.getContext("2d");
  if (!b64) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    return;
  }
  const bitmap = await createImageBitmap(new Blob([fromBase64(b64)], { type: "image/png" }));
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  ctx.drawImage(bitmap, 0, 0);
}
