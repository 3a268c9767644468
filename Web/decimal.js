// Exact decimals (BigInt fixed point): the fractal view's centre, zoom and Julia constant. No
// floating-point number takes part in this arithmetic, so a view zoomed to any depth is still
// the exact text the command line is given.

// MARK: Exact decimals (BigInt fixed point)

const powers = [1n];
/** 10^n as a BigInt. */
export function p10(n) {
  while (powers.length <= n) powers.push(powers[powers.length - 1] * 10n);
  return powers[n];
}

/** a / b rounded to the nearest integer, halves away from zero. */
export function divRound(a, b) {
  if (b < 0n) { a = -a; b = -b; }
  const q = a / b, r = a % b;
  const r2 = (r < 0n ? -r : r) * 2n;
  if (r2 >= b) return a < 0n ? q - 1n : q + 1n;
  return q;
}

export function digitCount(v) { return (v < 0n ? -v : v).toString().length; }

/** Decimal text (sign, digits, fraction, exponent) as {v, d}: the value v / 10^d; null if not a number. */
export function parseDecimal(text) {
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,7}))?\s*$/.exec(String(text));
  if (!m) return null;
  const int = m[2] || "", frac = m[3] || "";
  if (int.length + frac.length === 0) return null;
  let v = BigInt((int + frac) || "0");
  let d = frac.length - (m[4] ? parseInt(m[4], 10) : 0);
  if (d < 0) { v *= p10(-d); d = 0; }
  if (d > 200000) return null;
  return { v: m[1] === "-" ? -v : v, d };
}

/** v / 10^d as plain decimal text, without trailing zeros. */
export function decimalText(v, d) {
  const neg = v < 0n;
  let s = (neg ? -v : v).toString();
  if (d > 0) {
    s = s.padStart(d + 1, "0");
    let int = s.slice(0, s.length - d), frac = s.slice(s.length - d).replace(/0+$/, "");
    s = frac ? int + "." + frac : int;
  }
  return (neg && s !== "0" ? "-" : "") + s;
}

/** v / 10^d expressed with `d2` decimals (rounded when fewer). */
export function rescale(v, d, d2) {
  return d2 >= d ? v * p10(d2 - d) : divRound(v, p10(d - d2));
}

// A zoom is {m, e}: the positive value m * 10^e.

export function parseZoom(text) {
  const x = parseDecimal(text);
  if (!x || x.v <= 0n) return null;
  return roundZoom({ m: x.v, e: -x.d }, 40);
}

/** The zoom with at most `sig` significant digits (rounded), trailing zeros moved to e. */
export function roundZoom(z, sig) {
  let { m, e } = z;
  const n = digitCount(m);
  if (n > sig) { m = divRound(m, p10(n - sig)); e += n - sig; }
  while (m > 0n && m % 10n === 0n) { m /= 10n; e += 1; }
  return { m, e };
}

/** floor(log10(zoom)). */
export function zoomExponent(z) { return z.e + digitCount(z.m) - 1; }

/** The zoom times num/den, rounded to four significant digits, never below 1e-9. */
export function scaleZoom(z, num, den) {
  const scaled = roundZoom({ m: divRound(z.m * num * p10(24), den), e: z.e - 24 }, 4);
  return zoomExponent(scaled) < -9 ? { m: 1n, e: -9 } : scaled;
}

export function zoomText(z) {
  const digits = z.m.toString();
  const exp = zoomExponent(z);
  // Plain digits for everyday zooms (10.12, 150, 0.5); powers of ten past them (2.5e4, 1.5e40).
  if (exp >= -4 && exp <= 8 && z.e < 3) return z.e >= 0 ? digits + "0".repeat(z.e) : decimalText(z.m, -z.e);
  return digits[0] + (digits.length > 1 ? "." + digits.slice(1) : "") + "e" + exp;
}

export function sameZoom(a, b) { return a.m === b.m && a.e === b.e; }

/** An integer square root (Newton), for the two-finger pinch's distance ratio. */
export function isqrt(n) {
  if (n < 2n) return n;
  let x = BigInt(Math.round(Math.sqrt(Number(n)))) + 1n;   // a first guess only; Newton makes it exact
  for (;;) {
    const y = (x + n / x) / 2n;
    if (y >= x) break;
    x = y;
  }
  while (x * x > n) x -= 1n;
  while ((x + 1n) * (x + 1n) <= n) x += 1n;
  return x;
}

// MARK: Points of the plane

/** An exact point of the plane: (re, im) / 10^d. */
export function parsePoint(text) {
  const parts = String(text).split(",");
  if (parts.length !== 2) return null;
  const a = parseDecimal(parts[0]), b = parseDecimal(parts[1]);
  if (!a || !b) return null;
  const d = Math.max(a.d, b.d);
  return { re: rescale(a.v, a.d, d), im: rescale(b.v, b.d, d), d };
}

export function pointText(p) { return decimalText(p.re, p.d) + "," + decimalText(p.im, p.d); }

export function samePoint(a, b) {
  const d = Math.max(a.d, b.d);
  return rescale(a.re, a.d, d) === rescale(b.re, b.d, d) && rescale(a.im, a.d, d) === rescale(b.im, b.d, d);
}
