// The page's keyboard: views by number, the fractal's zoom, pan, iterations and palette, the ray
// tracer's camera, the comparison's viewer, and `?` for a help overlay listing every key
// (docs/SERVE.md lists the same).

import { $ } from "./util.js";
import { state, views } from "./state.js";

/** The tabs in order: the digit keys 1 to 6 show them. */
const TABS = ["fractal", "rtow", "mist", "pulse", "iso", "compare"];

/** Every key, as the help overlay shows it: [section, [[[keys], what they do], ...]]. */
const KEYS = [
  ["Everywhere", [
    [["1", "…", "6"], "show a view: fractal, ray tracer, misty window, pulse, iso, compare"],
    [["?"], "this help (? or Escape or a click closes it)"],
  ]],
  ["Fractal", [
    [["+", "=", "PageUp"], "zoom in ×2 about the centre"],
    [["-", "PageDown"], "zoom out ÷2"],
    [["←", "→", "↑", "↓"], "pan a tenth of the view"],
    [["0", "Home"], "reset the view"],
    [["]", "["], "iterations ×2, ÷2 (from auto: from the count it found)"],
    [["a"], "iterations auto"],
    [["p", "P"], "next, previous palette"],
  ]],
  ["Ray tracer", [
    [["←", "→"], "orbit 15° round"],
    [["↑", "↓"], "orbit 10° up, down"],
    [["+", "=", "PageUp"], "closer (one wheel notch)"],
    [["-", "PageDown"], "farther"],
    [["0", "Home"], "reset the camera"],
  ]],
  ["Compare", [
    [["a", "b", "d"], "show A, B, the difference"],
    [["Space"], "flip between A and B"],
    [["e", "E"], "the difference's gain up, down (×1, ×4, ×16, ×64)"],
    [["h"], "the server's heat map as the difference (again: the gain)"],
    [["+", "=", "PageUp"], "zoom in ×2 about the pointer (up to ×64)"],
    [["-", "PageDown"], "zoom out ÷2"],
    [["←", "→", "↑", "↓"], "pan a tenth of the viewer"],
    [["0", "Home"], "fit the picture to the viewer"],
  ]],
];

const ITERATIONS_MAX = 16777216;

/** Whether a key typed with focus on `el` belongs to it: text fields, menus and sliders keep
 *  their own keys (arrows move a slider, digits go into a field). */
function typing(el) {
  if (!el || !el.tagName) return false;
  if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
  return el.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "file", "color"].includes(el.type);
}

export function initKeys() {
  buildHelp();
  $("help").addEventListener("click", () => showHelp(false));
  $("help-button").onclick = () => showHelp(true);
  document.addEventListener("keydown", onKey);
}

function helpShown() { return !$("help").classList.contains("hidden"); }

function showHelp(on) {
  $("help").classList.toggle("hidden", !on);
}

function buildHelp() {
  const box = $("help-keys");
  for (const [section, keys] of KEYS) {
    const h = document.createElement("h3");
    h.textContent = section;
    const table = document.createElement("table");
    for (const [k, what] of keys) {
      const tr = table.insertRow();
      const kc = tr.insertCell(), wc = tr.insertCell();
      for (const one of k) {
        // "…" stands between the ends of a range of keys.
        if (one === "…") { kc.append("… "); continue; }
        const kbd = document.createElement("kbd");
        kbd.textContent = one;
        kc.append(kbd, " ");
      }
      wc.textContent = what;
    }
    box.append(h, table);
  }
}

function onKey(e) {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  if (helpShown()) {
    if (e.key === "?" || e.key === "Escape") { showHelp(false); e.preventDefault(); }
    return;
  }
  // A modal dialog (the zoom video's) and fields keep their keys.
  if (document.querySelector("dialog[open]") || typing(e.target)) return;
  if (handle(e)) e.preventDefault();
}

/** Acts on a key; true when it was one of the page's. */
function handle(e) {
  const k = e.key;
  if (k === "?") { showHelp(true); return true; }
  if (/^[1-6]$/.test(k)) { $("tab-" + TABS[Number(k) - 1]).click(); return true; }
  // A held key repeats: its views are a gesture's steps, settled when it rests (conn.js).
  const once = !e.repeat;
  if (state.activeView === "fractal") return fractalKey(k, once);
  if (state.activeView === "rtow") return rtowKey(k, once);
  if (state.activeView === "compare") return views.compare.key(k);
  return false;
}

function fractalKey(k, once) {
  const f = views.fractal;
  const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
  if (arrows[k]) {
    f.panTenths(...arrows[k]);
  } else if (k === "+" || k === "=" || k === "PageUp") {
    f.zoomCentred(2n, 1n);
  } else if (k === "-" || k === "PageDown") {
    f.zoomCentred(1n, 2n);
  } else if (k === "0" || k === "Home") {
    $("fractal-reset").click();
    return true;
  } else if (k === "]" || k === "[") {
    // From auto, the count auto found for this picture is where doubling or halving starts.
    const from = f.iterations === "auto" ? (f.chosen || 128) : f.iterations;
    const n = Math.max(1, Math.min(ITERATIONS_MAX, k === "]" ? from * 2 : Math.floor(from / 2)));
    if (n === f.iterations) return true;
    f.iterations = n;
  } else if (k === "a") {
    if (f.iterations === "auto") return true;
    f.iterations = "auto";
  } else if (k === "p" || k === "P") {
    const sel = $("fractal-palette");
    const n = sel.options.length;
    sel.selectedIndex = (sel.selectedIndex + (k === "p" ? 1 : n - 1)) % n;
    sel.dispatchEvent(new Event("change"));
    return true;
  } else {
    return false;
  }
  f.send(once);
  return true;
}

function rtowKey(k, once) {
  const r = views.rtow;
  const arrows = { ArrowLeft: [15, 0], ArrowRight: [-15, 0], ArrowUp: [0, 10], ArrowDown: [0, -10] };
  if (arrows[k]) {
    r.orbit(...arrows[k]);
  } else if (k === "+" || k === "=" || k === "PageUp" || k === "-" || k === "PageDown") {
    r.dolly(k === "-" || k === "PageDown" ? 1 : -1);
  } else if (k === "0" || k === "Home") {
    $("rtow-reset").click();
    return true;
  } else {
    return false;
  }
  r.send(once);
  return true;
}
