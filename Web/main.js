// Glint's page for `glint serve`: one view per workload, every view a command line of that
// workload, rendered by the server and streamed back over one WebSocket (docs/SERVE.md).
//
// The fractal view keeps its centre, zoom and Julia constant as exact decimals (BigInt fixed
// point): no floating-point number takes part in the view's arithmetic, so a view zoomed to any
// depth is still the exact text the command line is given.
//
// This module starts the page: the views table, tabs, links (the address's #VIEW=ARGS), the
// device list and the read-only hook for tests. Every other module is one view (fractal.js and
// its fractal-*.js parts, rtow.js, mist.js, pulse.js, iso.js, compare.js), the keyboard (keys.js)
// or what they share (state.js, conn.js, util.js, decimal.js, canvas.js).

import { $, notify, splitWords } from "./util.js";
import { canvasHash, fitCanvas } from "./canvas.js";
import { connect, failure, setHash, settleHash, showStatus } from "./conn.js";
import { conn, current, errors, firstPngs, history, lastFrame, pngs, sent, state, views } from "./state.js";
import { JULIA_TYPES } from "./fractal-location.js";
import { fractalView } from "./fractal.js";
import { rtowView } from "./rtow.js";
import { mistView } from "./mist.js";
import { pulseView } from "./pulse.js";
import { isoView } from "./iso.js";
import { compareView } from "./compare.js";
import { initKeys } from "./keys.js";

// MARK: Views, tabs and links

Object.assign(views, { fractal: fractalView, rtow: rtowView, mist: mistView, pulse: pulseView, iso: isoView, compare: compareView });

/** Shows a view; one shown for the first time renders itself unless `render` is false. */
function showView(name, render = true) {
  if (!views[name]) name = "fractal";
  state.activeView = name;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.view === name);
  for (const s of document.querySelectorAll("main .view")) s.classList.toggle("active", s.dataset.view === name);
  for (const c of document.querySelectorAll(`#view-${name} .stage > canvas`)) fitCanvas(c);
  showStatus();
  if (!state.ready || !render) return;
  if ((name === "fractal" || name === "rtow") && !lastFrame[name] && !current[name]) views[name].send(true);
  else if (name === "fractal" || name === "rtow") followStage(0);   // the window may have changed while hidden
  if (name === "compare" && $("compare-from").value !== "custom") compareView.fill();
  if (name === "fractal" && JULIA_TYPES.has(fractalView.formula)) fractalView.showInset();
}

/** The address's parts: [[name, value or null]], each part's value decoded on its own. */
function linkParts(hash) {
  return hash.replace(/^#/, "").split("&").filter((p) => p).map((p) => {
    const eq = p.indexOf("=");
    return eq < 0 ? [decodeURIComponent(p), null] : [decodeURIComponent(p.slice(0, eq)), decodeURIComponent(p.slice(eq + 1))];
  });
}

/** The views whose own command lines are their links (their pictures come from nothing else). */
const RENDERED = new Set(["fractal", "rtow"]);

/**
 * Renders the source part of a link (`[view, args]`: the view a pass view was made from) and then
 * `then()`, once its final picture is what upload:last names; false when there is none.
 */
function renderSourceThen(source, then) {
  if (!source) return false;
  const [name] = source;
  const view = state.activeView;
  const before = current[name];
  views[name].send(true);
  const req = conn.requests.get(current[name]);
  if (!req || current[name] === before) return false;
  // Only while the link's view is still the one shown: a tab left meanwhile starts nothing.
  req.after = () => { if (state.activeView === view) asLink(then); };
  return true;
}

/** Runs `start` (a link's job) so that the addresses it writes replace the link's history entry. */
function asLink(start) {
  state.applyingLink = true;
  try {
    const result = start();
    if (result && result.catch) result.catch((e) => notify("the link's view: " + e.message));
  } catch (e) {
    notify("the link's view: " + e.message);
  } finally {
    state.applyingLink = false;
  }
}

/** Applies the address's view; true when it asked for a render or started a job. */
function applyHash() {
  let parts;
  try {
    parts = linkParts(location.hash);
  } catch (e) {
    notify("the link is not a view: " + e.message);
    return false;
  }
  if (parts.length === 0) return false;
  const [name, text] = parts[0];
  if (!views[name]) return false;
  const words = text === null ? null : splitWords(text);
  const more = new Map(parts.slice(1));
  // A pass view's link names the rendered view its picture came from.
  const sourceName = [...more.keys()].find((k) => RENDERED.has(k));
  const source = sourceName && more.get(sourceName) !== null ? [sourceName, splitWords(more.get(sourceName))] : null;
  try {
    // The source view first: a source that does not read leaves the pass view's fields as they were.
    if (source && (name === "iso" || name === "mist")) {
      views[source[0]].fromArgs(source[1]);
      views[source[0]].syncControls();
      $(name === "iso" ? "iso-source" : "mist-source").value = name === "iso" ? "last" : "render";
    }
    if (words) {
      if (name === "compare") views.compare.fromLink(words, more.get("a"), more.get("b"));
      else views[name].fromArgs(words);
    }
    if (views[name].syncControls) views[name].syncControls();
  } catch (e) {
    // The view shown stays as it was: nothing is rendered for a link that does not read.
    notify("the link's view: " + e.message);
    state.shownHash = location.hash;   // said once, though popstate and hashchange both come
    showView(name);
    return false;
  }
  // A pass view's link starts only with its source view (an upload or the camera cannot travel).
  const started = !!words && state.ready && ((name !== "iso" && name !== "mist") || !!source);
  showView(name, !started);
  if (started) {
    if (RENDERED.has(name)) views[name].send(true);
    else if (name === "pulse") asLink(() => views.pulse.start());
    else if (name === "compare") asLink(() => views.compare.run());
    else if (name === "iso") renderSourceThen(source, () => views.iso.apply());
    else if (name === "mist") renderSourceThen(source, () => views.mist.start());
  }
  // An address navigated to is a settled view: the next change is an entry after it.
  state.shownHash = location.hash;
  settleHash();
  return started;
}

/** Back, Forward or a typed address: the view it names (popstate and hashchange both come for
 *  one step, and the address the page has just shown is not applied again). */
function onAddress() {
  if (location.hash === state.shownHash) return;
  applyHash();
}

async function loadInfo() {
  try {
    const res = await fetch("/api/info");
    if (!res.ok) throw new Error(await failure(res));
    state.info = await res.json();
  } catch (e) {
    notify("server info: " + e.message);
    state.info = {};
  }
  const devices = deviceList(state.info);
  const fallback = state.info.default_device || state.info.device || state.info.defaultDevice || (devices[0] && devices[0].id) || "";
  for (const id of ["device", "compare-a", "compare-b"]) {
    const sel = $(id);
    sel.textContent = "";
    for (const d of devices) sel.add(new Option(d.label, d.id));
  }
  if (fallback && ![...$("device").options].some((o) => o.value === fallback)) $("device").add(new Option(fallback, fallback), 0);
  $("device").value = fallback;
  $("compare-a").value = devices.some((d) => d.id === "cpu") ? "cpu" : fallback;
  const opencl = devices.find((d) => d.id.startsWith("opencl"));
  $("compare-b").value = opencl ? opencl.id : fallback;
  $("version").textContent = state.info.version ? "glint " + state.info.version : "";
}

/** The devices of /api/info as [{id, label}]. */
function deviceList(i) {
  const raw = i.devices || [];
  const out = [];
  for (const d of raw) {
    if (typeof d === "string") out.push({ id: d, label: d });
    else if (d && typeof d === "object") {
      const id = d.id || d.device || d.choice || d.name;
      if (!id) continue;
      const label = d.name && d.name !== id ? `${id}: ${d.name}` : id;
      out.push({ id, label });
    }
  }
  if (!out.some((d) => d.id === "cpu")) out.unshift({ id: "cpu", label: "cpu" });
  return out;
}

// MARK: The window's size and resolution

let stageTimer = null;

/** The shown view, if auto-sized, renders again at its stage's new size once the window has
 *  rested for `wait` ms (a resize sends many events). */
function followStage(wait = 200) {
  clearTimeout(stageTimer);
  stageTimer = setTimeout(() => {
    const v = views[state.activeView];
    if (!state.ready || !v || !v.refreshSize || !v.refreshSize()) return;
    if (v.resetShown) v.resetShown();
    v.send(true);
  }, wait);
}

/** A change of the screen's pixel ratio (a window moved to another screen, the browser's zoom)
 *  fires no resize of its own; a media query for the ratio in force reports it in most browsers,
 *  and a check each second catches the rest (an emulated ratio fires neither). */
function watchPixelRatio() {
  let ratio = window.devicePixelRatio;
  const changed = () => {
    if (window.devicePixelRatio === ratio) return;
    ratio = window.devicePixelRatio;
    followStage();
    query.removeEventListener("change", changed);
    query = matchMedia(`(resolution: ${ratio}dppx)`);
    query.addEventListener("change", changed);
  };
  let query = matchMedia(`(resolution: ${ratio}dppx)`);
  query.addEventListener("change", changed);
  setInterval(changed, 1000);
}

// MARK: The read-only hook for tests and scripts

const copy = (x) => (x === undefined ? undefined : JSON.parse(JSON.stringify(x)));

window.glint = Object.freeze({
  get ready() { return state.ready && conn.open; },
  get info() { return copy(state.info); },
  get activeView() { return state.activeView; },
  get lastFrame() { return copy(lastFrame); },
  get current() { return copy(current); },
  get errors() { return errors.slice(); },
  get sent() { return copy(sent); },
  get lastPicture() { return copy(state.lastPicture); },
  get lastCompare() { return copy(state.lastCompare); },
  /** The compare viewer: what it shows, its zoom, and the pixel under the pointer with A's and B's RGBA. */
  get compareProbe() { return copy(compareView.probe()); },
  get location() { return state.locationText; },
  /** The pictures uploaded from the mist and iso views (upload:ID), null before any. */
  get uploads() { return { mist: mistView.uploadId, iso: isoView.uploadId, texture: fractalView.texture }; },
  /** The last PNG received for a view, as base64 (null before any). */
  lastPNG(view) { return pngs[view] || null; },
  /** The first PNG of the view's newest job, as {id, frame, png} (a live job's frame and its index). */
  firstPNG(view) { return copy(firstPngs[view]) || null; },
  /** The view's frames and latencies: [{id, stage, width, height, latencyMs, sinceRequestMs, wallMs}]. */
  history(view) { return copy(history[view] || []); },
  /** The command-line options the view renders now. */
  args(view) { return views[view] && views[view].args ? views[view].args() : null; },
  /** The view's picture as a short hash of its canvas's pixels. */
  canvasHash(view) { const c = $("canvas-" + view); return c ? canvasHash(c) : null; },
  /** Whether the view's newest request has finished (its "done" came). */
  isDone(view) { const r = conn.requests.get(current[view]); return !!(r && r.done); },
  /** The view's newest request's error, if it failed. */
  requestError(view) { const r = conn.requests.get(current[view]); return r && r.error ? r.error : null; },
});

// MARK: Start

function start() {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.onclick = () => {
      settleHash();   // the view left keeps its history entry, even mid-render
      showView(b.dataset.view);
      const v = views[b.dataset.view];
      const l = v.link ? v.link() : { args: v.args ? v.args() : null };
      setHash(b.dataset.view, l.args, true, l.more);
    };
  }
  fractalView.init();
  rtowView.init();
  mistView.init();
  pulseView.init();
  isoView.init();
  compareView.init();
  $("device").onchange = () => {
    fractalView.inset.stale = true;
    if (state.activeView === "fractal" || state.activeView === "rtow") views[state.activeView].send(true);
  };
  window.addEventListener("resize", () => {
    for (const c of document.querySelectorAll(".view.active .stage > canvas")) fitCanvas(c);
    fractalView.redraw();
    followStage();
  });
  watchPixelRatio();
  $("resolution").onchange = () => followStage(0);
  window.addEventListener("popstate", onAddress);
  window.addEventListener("hashchange", onAddress);
  initKeys();
  connect();
  loadInfo().then(() => {
    state.ready = true;
    if (!applyHash()) showView(state.activeView);
  });
  showView(decodeURIComponent(location.hash.replace(/^#/, "")).split("=")[0] || "fractal");
}

document.addEventListener("DOMContentLoaded", start);
