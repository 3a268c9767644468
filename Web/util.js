// Small functions the views share: text, numbers, base64, the clipboard, the message bar.

import { errors } from "./state.js";

// MARK: Small functions

export const $ = (id) => document.getElementById(id);
export const now = () => performance.now();

/** A number as short text: at most `places` decimals, no trailing zeros, no "-0". */
export function short(x, places = 3) {
  let t = Number(x).toFixed(places);
  if (t.includes(".")) t = t.replace(/0+$/, "").replace(/\.$/, "");
  return t === "-0" ? "0" : t;
}

/** One shell word: bare when safe, else in single quotes. */
export function shellWord(w) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'";
}

/** Command-line words from text: split on white space, with '...' and "..." grouping. */
export function splitWords(text) {
  const words = [];
  const re = /'([^']*)'|"([^"]*)"|(\S+)/g;
  let m;
  while ((m = re.exec(text)) !== null) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

export function base64(buffer) {
  const bytes = new Uint8Array(buffer);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(text) {
  const s = atob(text);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

/** A parser of whole numbers from `lo` to `hi`: the number, or null for other text. */
export function wholeIn(lo, hi) {
  return (text) => {
    const n = parseInt(text, 10);
    return n >= lo && n <= hi ? n : null;
  };
}

/** The most pixels an image may have a side (the server's image limits, docs/LIMITS.md). */
export const MAX_SIDE = 32768;

/** "WxH" as {w, h}, or null (`sizeProblem` says why). */
export function parseSize(text) {
  if (sizeProblem(text)) return null;
  const m = /(\d+)\s*[xX×]\s*(\d+)/.exec(text);
  return { w: parseInt(m[1], 10), h: parseInt(m[2], 10) };
}

/** Why `text` is no size, or null: its form (WxH) told apart from a limit it passes. */
export function sizeProblem(text) {
  const m = /^\s*(\d+)\s*[xX×]\s*(\d+)\s*$/.exec(text || "");
  if (!m) return "a size is WxH, e.g. 640x400";
  const w = Number(m[1]), h = Number(m[2]);
  if (w < 1 || h < 1) return `${m[1]}x${m[2]}: each side is at least 1 pixel`;
  if (w > MAX_SIDE || h > MAX_SIDE) return `${m[1]}x${m[2]} is over the limit of ${MAX_SIDE} pixels a side`;
  return null;
}

/** The size of a link's --size value; an error naming the option when it is none. */
export function linkSize(text) {
  const problem = sizeProblem(text);
  if (problem) throw new Error("--size: " + problem);
  return parseSize(text);
}

export function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(() => notify("copied", "info"), () => fallbackCopy(text));
  } else {
    fallbackCopy(text);
  }
}

function fallbackCopy(text) {
  const t = document.createElement("textarea");
  t.value = text;
  document.body.appendChild(t);
  t.select();
  try { document.execCommand("copy"); notify("copied", "info"); } catch (e) { notify("could not copy: select the text and copy it"); }
  t.remove();
}

// MARK: Messages (a bar that never blocks the page)

export function notify(text, kind = "error") {
  if (kind === "error") errors.push(String(text));
  const box = $("messages");
  const el = document.createElement("div");
  el.className = "message " + kind;
  const span = document.createElement("span");
  span.textContent = text;
  const close = document.createElement("button");
  close.textContent = "×";
  close.title = "Dismiss";
  close.onclick = () => el.remove();
  el.append(span, close);
  box.appendChild(el);
  while (box.children.length > 4) box.firstChild.remove();
  setTimeout(() => el.remove(), kind === "error" ? 10000 : 2500);
}

// MARK: The views' commands

/** Takes what is typed into the input `id`: text that `parse` reads (to a value, not null) goes
 *  to `take`; other text is refused with `hint` in the message bar, the input showing `shown()`
 *  again. */
export function onValidChange(id, parse, hint, shown, take) {
  $(id).addEventListener("change", (e) => {
    const v = parse(e.target.value);
    if (v === null) { notify(hint); e.target.value = shown(); return; }
    take(v);
  });
}

/** Sends `view`'s request now, or once `gap` ms have passed since its last one (a gesture
 *  sends many: the server gets at most one view per gap). */
export function throttledSend(view, gap, immediately) {
  view.syncControls();
  clearTimeout(view.sendTimer);
  const wait = immediately ? 0 : Math.max(0, gap - (now() - view.lastSent));
  // Only a view asked for at once settles the address when it is done (conn.js's setHash).
  if (wait === 0) view.sendNow(!!immediately);
  else view.sendTimer = setTimeout(() => view.sendNow(false), wait);
}

/** Reads a command line's words (a link's) into a view: `take(word, value)` takes the options
 *  the view knows (`value()` reads the option's value, an error at the end) and answers false
 *  for the others, which come back in order, each --option with the value that follows it. */
export function readOptions(words, take) {
  const extra = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const value = () => {
      if (i + 1 >= words.length) throw new Error(`${w} needs a value`);
      return words[++i];
    };
    if (take(w, value)) continue;
    extra.push(w);
    if (w.startsWith("--") && i + 1 < words.length && !words[i + 1].startsWith("--")) extra.push(words[++i]);
  }
  return extra;
}

/** The server's echoed command with an output file (and nothing more). */
export function cliCommand(command, output) {
  return / -o /.test(command) ? command : command + " -o " + output;
}

/** Reads a link's words into the view's number fields, `fields` being [[id, option, default,
 *  decimal]] (decimal: the command takes a fraction, else a whole number): a field the link leaves
 *  out gets its default. `other(w, value)` takes the view's other options first. The words left
 *  over, as readOptions gives them. */
export function readFieldOptions(words, fields, other = () => false) {
  const values = {};
  const extra = readOptions(words, (w, value) => {
    if (other(w, value)) return true;
    const f = fields.find(([, option]) => option === w);
    if (!f) return false;
    const text = value().trim();
    if (f[3] ? !/^(\d+\.?\d*|\.\d+)$/.test(text) : !/^\d+$/.test(text)) throw new Error(`${w}: ${f[3] ? "a number from 0" : "a whole number"}`);
    values[f[0]] = text;
    return true;
  });
  for (const [id, , fallback] of fields) $(id).value = values[id] ?? fallback;
  return extra;
}
