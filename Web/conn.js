// The connection to the server: jobs and their frames over one WebSocket (docs/SERVE.md), the
// HTTP API, the status line and the address.

import { $, base64, notify, now, short } from "./util.js";
import { conn, current, firstPngs, history, lastFrame, pngs, sent, state, views } from "./state.js";

// MARK: The connection

function wsURL() {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
}

export function connect() {
  const ws = new WebSocket(wsURL());
  ws.binaryType = "arraybuffer";
  conn.ws = ws;
  setConnection("connecting", "");
  ws.onopen = () => {
    conn.open = true;
    conn.retry = 500;
    setConnection("connected", "open");
    if (conn.queued) {
      const q = conn.queued;
      conn.queued = null;
      q.sentAt = now();
      ws.send(JSON.stringify(q.message));
    }
  };
  ws.onclose = () => {
    const was = conn.open;
    conn.open = false;
    conn.pendingFrame = null;
    setConnection("disconnected", "closed");
    for (const v of Object.values(views)) if (v.live) v.setLive(false);
    if (was) notify("the connection to the server closed; reconnecting");
    setTimeout(connect, conn.retry);
    conn.retry = Math.min(conn.retry * 2, 5000);
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { notify("the server sent a message that is not JSON"); return; }
      onMessage(msg);
    } else {
      onPicture(ev.data);
    }
  };
}

function setConnection(text, cls) {
  const el = $("connection");
  el.textContent = text;
  el.className = "pill " + cls;
}

/** Sends a job for `view` (render, mist or pulse): it supersedes the view's and the connection's previous one. */
export function request(view, message, extra = {}) {
  const id = conn.nextId++;
  message.id = id;
  const device = $("device").value;
  if (device && message.device === undefined) message.device = device;
  const req = Object.assign({ id, view, sentAt: now(), firstAt: null, lastAt: null, kind: message.type, message }, extra);
  conn.requests.set(id, req);
  current[view] = id;
  // Requests of other views were cancelled by this one (one job per connection).
  for (const [vid, v] of Object.entries(views)) if (vid !== view && v.live) v.setLive(false);
  sent[message.type] = (sent[message.type] || 0) + 1;
  if (conn.open) {
    conn.ws.send(JSON.stringify(message));
  } else {
    conn.queued = req;
  }
  views[view].status = `${view} #${id}: sent`;
  showStatus();
  return req;
}

/** Ends the connection's live job (mist's or pulse's) and marks `view` stopped. */
export function stopLive(view) {
  sendControl({ type: "stop" });
  view.setLive(false);
  // Frames already on their way are not shown, and the status line says it stopped.
  const name = Object.keys(views).find((k) => views[k] === view);
  const req = name && conn.requests.get(current[name]);
  if (req) {
    req.stopped = true;
    view.status = `${name} #${req.id} stopped`;
    showStatus();
  }
}

/** A message that is not a job (wipe, gravity, stop); dropped while the socket is down. */
export function sendControl(message) {
  if (!conn.open) return false;
  conn.ws.send(JSON.stringify(message));
  sent[message.type] = (sent[message.type] || 0) + 1;
  return true;
}

function onMessage(msg) {
  switch (msg.type) {
  case "frame":
    conn.pendingFrame = msg;
    break;
  case "error": {
    const req = conn.requests.get(msg.id);
    const text = msg.error || "error";
    const where = req && !text.startsWith(req.view + ":") ? req.view + ": " : "";
    notify(where + text + (msg.status ? ` (${msg.status})` : ""));
    if (req) {
      req.error = msg.error;
      const v = views[req.view];
      if (current[req.view] === req.id) {
        v.status = `${req.view} #${req.id}: error`;
        if (v.live) v.setLive(false);
        if (v.onError) v.onError(msg);
      }
      showStatus();
    }
    break;
  }
  case "done": {
    const req = conn.requests.get(msg.id);
    if (!req) break;
    req.done = true;
    const lf = lastFrame[req.view];
    if (lf && lf.id === req.id) lf.done = true;
    const v = views[req.view];
    if (current[req.view] === req.id) {
      if (v.live) v.setLive(false);
      if (v.onDone) v.onDone(req);
      // A link's next step waits for this picture (iso or mist of a view: renderSourceThen in main.js).
      if (req.after && !req.error) req.after();
      // A view asked for at once (not mid-gesture) is settled by its final frame.
      if (req.settles && req.view === state.activeView) settleHash();
    }
    // Keep the map small: requests long superseded are forgotten.
    for (const id of conn.requests.keys()) if (id < msg.id - 64) conn.requests.delete(id);
    break;
  }
  default:
    break;
  }
}

function onPicture(buffer) {
  const frame = conn.pendingFrame;
  conn.pendingFrame = null;
  if (!frame) return;
  const req = conn.requests.get(frame.id);
  if (!req) return;
  const t = now();
  // A render's final picture is what upload:last names from now on (docs/SERVE.md), unless it
  // was made from upload:last itself: iso applied again applies to the view, not to its result.
  const fromLast = (req.message.args || []).includes("upload:last");
  if (frame.stage === "final" && !fromLast) {
    state.lastPicture = { view: req.view, width: frame.width, height: frame.height, args: (req.message.args || []).slice() };
  }
  // A superseded or stopped job's late picture is not shown.
  if (current[req.view] !== req.id || req.stopped) return;
  const live = frame.stage === "live";
  const latency = live && req.lastAt !== null ? t - req.lastAt : t - req.sentAt;
  const first = req.firstAt === null;
  if (first) req.firstAt = t;
  req.lastAt = t;
  const record = {
    id: frame.id, stage: frame.stage, width: frame.width, height: frame.height,
    latencyMs: Math.round(latency * 10) / 10,
    sinceRequestMs: Math.round((t - req.sentAt) * 10) / 10,
    wallMs: frame.wall_ms, kernelMs: frame.kernel_ms, device: frame.device, command: frame.command,
    spp: frame.spp, targetSpp: frame.target_spp, samplesPerSecond: frame.samples_per_second,
    frame: frame.frame, fps: frame.fps, iterations: frame.iterations, done: false, bytes: buffer.byteLength,
  };
  lastFrame[req.view] = record;
  pngs[req.view] = base64(buffer);
  if (first) firstPngs[req.view] = { id: req.id, frame: frame.frame ?? null, png: pngs[req.view] };
  const h = history[req.view] || (history[req.view] = []);
  h.push({ id: record.id, stage: record.stage, width: record.width, height: record.height,
    latencyMs: record.latencyMs, sinceRequestMs: record.sinceRequestMs, wallMs: record.wallMs });
  if (h.length > 500) h.splice(0, h.length - 500);
  const view = views[req.view];
  view.status = statusLine(req, record);
  showStatus();
  view.showFrame(record, new Blob([buffer], { type: "image/png" }), req);
  views.iso.describeLast();
}

function statusLine(req, r) {
  let s = `${req.view} #${r.id} ${r.stage} ${r.width}x${r.height}`;
  if (r.stage === "live") {
    s += ` · frame ${r.frame ?? "?"}` + (r.fps !== undefined ? ` · ${short(r.fps, 1)} fps` : "") + ` · every ${short(r.latencyMs, 0)} ms`;
  } else {
    s += ` · latency ${short(r.latencyMs, 0)} ms`;
  }
  if (r.wallMs !== undefined) s += ` · server ${short(r.wallMs, 1)} ms`;
  if (r.kernelMs !== undefined && r.kernelMs !== null && r.kernelMs > 0) s += ` (kernels ${short(r.kernelMs, 1)} ms)`;
  if (r.spp !== undefined) s += ` · ${r.spp}/${r.targetSpp} spp`;
  if (r.device) s += ` · ${r.device}`;
  return s;
}

export function showStatus() {
  const v = views[state.activeView];
  $("status-text").textContent = (v && v.status) || "–";
}

// MARK: The address

const history_ = window.history;   // `history` here is the views' latencies (state.js)

/** How long the address must rest before its view counts as settled without a final frame (a
 *  wheel's notches and a drag's steps send many views; Back should skip them all at once). */
const SETTLE_MS = 1000;
let settled = null;   // the address of the history entry whose view has settled: the next view gets an entry of its own
let settleTimer = null;

/**
 * The view in the address: #VIEW=ARGS, its options as on the command line, and for a view made
 * from another's picture (iso, mist) or with settings beyond its command (compare) more
 * &NAME=VALUE parts; each part's value is encoded on its own (linkParts in main.js reads them).
 * A view changed after the address settled gets a history entry (pushState), one still changing
 * replaces its own (replaceState), so Back and Forward walk the settled views. `entry`: the view
 * is a step of its own (a tab, an Apply), settled at once.
 */
export function setHash(view, args, entry = false, more = []) {
  if (view !== state.activeView) return;
  const part = (name, value) => name + (value === null || value === undefined ? ""
    : "=" + encodeURIComponent(Array.isArray(value) ? value.join(" ") : value));
  const text = "#" + [part(view, args), ...more.map(([name, value]) => part(name, value))].join("&");
  if (state.applyingLink) {
    // The job a link started writes its address in the page's form in the link's own entry,
    // so that Back leaves the link rather than returning to it.
    history_.replaceState(null, "", text);
    state.shownHash = location.hash;
    settleHash();
    return;
  }
  if (entry) settleHash();
  if (location.hash !== text) {
    if (settled === location.hash) history_.pushState(null, "", text);
    else history_.replaceState(null, "", text);
  }
  state.shownHash = location.hash;
  clearTimeout(settleTimer);
  if (entry) settleHash();
  else settleTimer = setTimeout(settleHash, SETTLE_MS);
}

/** The link part naming the view whose picture a pass view (iso, mist) was made from:
 *  [[view, args]], or none when that is an upload or nothing yet. */
export function sourcePart(fromLast) {
  const p = state.lastPicture;
  return fromLast && p && p.args ? [[p.view, p.args]] : [];
}

/** The address's view has settled (its final frame came, or it rested): a change is a new entry. */
export function settleHash() {
  clearTimeout(settleTimer);
  settled = location.hash;
}

// MARK: HTTP

export async function postJSON(path, body) {
  const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return res;
}

export async function failure(res) {
  let text = `${res.status} ${res.statusText}`;
  try {
    const j = await res.json();
    if (j && j.error) text = j.error + ` (${res.status})`;
  } catch (e) { /* not JSON */ }
  return text;
}

/** Uploads each picture picked in the file input `id` and hands its {id, width, height} to
 *  `then`; a failure shows in the message bar after `label`. */
export function uploadOnPick(id, label, then) {
  $(id).onchange = async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    try {
      then(await upload(f));
    } catch (err) { notify(label + ": " + err.message); }
  };
}

/** Uploads a picture (any format the browser reads; sent as PNG): {id, width, height}. */
export async function upload(file) {
  let blob = file;
  if (file.type !== "image/png") {
    const bitmap = await createImageBitmap(file);
    const c = document.createElement("canvas");
    c.width = bitmap.width;
    c.height = bitmap.height;
    c.getContext("2d").drawImage(bitmap, 0, 0);
    blob = await new Promise((resolve) => c.toBlob(resolve, "image/png"));
  }
  const res = await fetch("/api/upload", { method: "POST", headers: { "Content-Type": "image/png" }, body: blob });
  if (!res.ok) throw new Error(await failure(res));
  return res.json();
}
