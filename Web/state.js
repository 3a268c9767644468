// The page's shared state, in one place: an imported binding cannot be assigned, so every
// module reads and changes these objects (their fields), never rebinds them.

/** The WebSocket and the jobs sent on it (conn.js). */
export const conn = {
  ws: null,
  open: false,
  nextId: 1,
  requests: new Map(),      // id -> {view, sentAt, firstAt, lastAt, kind, transform}
  pendingFrame: null,       // the frame header waiting for its PNG
  queued: null,             // the newest job asked for while the socket was down
  retry: 500,
};

export const current = {};         // view -> the id of its newest request
export const lastFrame = {};       // view -> the newest frame shown
export const pngs = {};            // view -> base64 of its newest PNG
export const firstPngs = {};       // view -> {id, frame, png}: the first PNG of its newest job (a live one's frame 0)
export const history = {};         // view -> [{id, stage, width, height, latencyMs, sinceRequestMs, wallMs}]
export const sent = { render: 0, mist: 0, pulse: 0, wipe: 0, gravity: 0, stop: 0, camera: 0 };

/** The rest of the page's state. */
export const state = {
  lastPicture: null,        // {view, width, height, args}: what upload:last names, and the job that made it
  info: null,               // the server's /api/info
  ready: false,             // the info has come: views may render
  activeView: "fractal",    // the view shown
  applyingLink: false,      // a link's jobs are starting: their addresses replace the link's entry (setHash)
  shownHash: "",            // the address the page shows: a popstate or hashchange to it again is not applied twice
  locationText: "",         // the fractal view's location (.kfr text), as the server wrote it
  lastCompare: null,        // the last comparison (its pictures left out), or its error
};

/** The messages shown as errors, oldest first. */
export const errors = [];

/** The views by name (main.js fills it): each has status, live, setLive(), showFrame() and
 *  perhaps onError() and onDone(); fractal and rtow also args(), send(), fromArgs(). */
export const views = {};
