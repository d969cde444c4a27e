/**
 * Values of a record's rows as people read them (spec: reckoner.md; upstream-facts.md 3.5).
 *
 * - A stored value is tagged: `{num}`, `{re, im}`, `{mag, ang}`, `{array}` or `{object}`,
 *   with `dim` the 7 SI exponents [m, kg, s, A, K, mol, cd].
 * - A dimension with a named SI unit shows as its symbol (Ω, N, Pa, ...); any other as a
 *   product of base units with superscript exponents. `s⁻¹` is never written Hz, as in
 *   the notebook's own rendering.
 */

const BASE = ['m', 'kg', 's', 'A', 'K', 'mol', 'cd'];

const NAMED: { [dim: string]: string } = {
  '1,1,-2,0,0,0,0': 'N',
  '-1,1,-2,0,0,0,0': 'Pa',
  '2,1,-2,0,0,0,0': 'J',
  '2,1,-3,0,0,0,0': 'W',
  '0,0,1,1,0,0,0': 'C',
  '2,1,-3,-1,0,0,0': 'V',
  '-2,-1,4,2,0,0,0': 'F',
  '2,1,-3,-2,0,0,0': 'Ω',
  '-2,-1,3,2,0,0,0': 'S',
  '2,1,-2,-2,0,0,0': 'H',
  '2,1,-2,-1,0,0,0': 'Wb',
  '0,1,-2,-1,0,0,0': 'T'
};

const SUP: { [ch: string]: string } = {
  '-': '⁻',
  '0': '⁰',
  '1': '¹',
  '2': '²',
  '3': '³',
  '4': '⁴',
  '5': '⁵',
  '6': '⁶',
  '7': '⁷',
  '8': '⁸',
  '9': '⁹'
};

function sup(n: number): string {
  return n === 1
    ? ''
    : String(n)
        .split('')
        .map(c => SUP[c] ?? c)
        .join('');
}

/** `[2,1,-3,-2,0,0,0]` -> `Ω`; `[1,0,-1,0,0,0,0]` -> `m·s⁻¹`; dimensionless -> ''. */
export function unitText(dim: unknown): string {
  if (!Array.isArray(dim) || dim.length !== 7) {
    return typeof dim === 'string' ? dim : '';
  }
  const key = dim.join(',');
  if (NAMED[key]) {
    return NAMED[key];
  }
  return dim
    .map((e: number, i: number) => (e ? BASE[i] + sup(e) : ''))
    .filter(Boolean)
    .join('·');
}

/** A number in at most `digits` significant digits, without trailing zeros. */
export function numText(x: unknown, digits = 6): string {
  if (typeof x !== 'number') {
    return x === null || x === undefined ? '' : String(x);
  }
  if (!isFinite(x)) {
    return String(x);
  }
  if (x !== 0 && (Math.abs(x) >= 1e6 || Math.abs(x) < 1e-4)) {
    const [m, e] = x.toExponential(digits - 1).split('e');
    return `${trim(m)}×10${sup(Number(e))}`;
  }
  return trim(x.toPrecision(digits));
}

function trim(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

function bare(v: any): string {
  if (typeof v === 'number') {
    return numText(v);
  }
  if (Array.isArray(v)) {
    return '[' + v.map(bare).join(', ') + ']';
  }
  if (v && typeof v === 'object') {
    if ('re' in v) {
      return complexText(v.re, v.im);
    }
    if ('mag' in v) {
      return `${numText(v.mag)}∠${numText(v.ang)} rad`;
    }
  }
  return JSON.stringify(v);
}

function complexText(re: number, im: number): string {
  const sign = im < 0 ? '−' : '+';
  return `${numText(re)} ${sign} ${numText(Math.abs(im))}j`;
}

/** A temperature point's scale (issue 17): the kelvins of a stored value read on it. */
const SCALES: Record<string, [string, (k: number) => number]> = {
  degC: ['°C', k => k - 273.15],
  degF: ['°F', k => k * 1.8 - 459.67]
};

function onScale(x: any, to: (k: number) => number): any {
  if (typeof x === 'number') {
    return to(x);
  }
  if (Array.isArray(x)) {
    return x.map(e => onScale(e, to));
  }
  return x;
}

/**
 * A row's display unit (issue 18: `[[symbol, exponent, factor, vector(, true)], ...]`, the units
 * the person wrote, as `reckoner/shown_units.py` writes them) as `{text, factor}`, or null when it
 * is malformed or not of the value's vector (the value then shows in SI). `kN·mm`, `W/K`,
 * `W/(m²·K)`, `s⁻¹`.
 */
export function shownUnit(unit: unknown, dim: unknown): { text: string; factor: number } | null {
  if (!Array.isArray(unit) || !unit.length || unit.length > 12 || !Array.isArray(dim) || dim.length !== 7) {
    return null;
  }
  const sum = [0, 0, 0, 0, 0, 0, 0];
  let factor = 1;
  const num: string[] = [];
  const den: string[] = [];
  for (const atom of unit) {
    if (!Array.isArray(atom) || atom.length < 4 || atom.length > 5) {
      return null;
    }
    const [sym, e, f, vec] = atom;
    if (
      typeof sym !== 'string' ||
      !sym ||
      sym.length > 32 ||
      !Number.isInteger(e) ||
      !e ||
      typeof f !== 'number' ||
      !(f > 0) ||
      !Number.isFinite(f) ||
      !Array.isArray(vec) ||
      vec.length !== 7
    ) {
      return null;
    }
    vec.forEach((x: number, i: number) => (sum[i] += x * e));
    factor *= Math.pow(f, e);
    (e > 0 ? num : den).push(sym + sup(Math.abs(e)));
  }
  if (sum.some((x, i) => x !== dim[i])) {
    return null;
  }
  let text: string;
  if (!num.length) {
    text = unit.map((a: any) => a[0] + sup(a[1])).join('·');
  } else if (!den.length) {
    text = num.join('·');
  } else {
    text = num.join('·') + '/' + (den.length === 1 ? den[0] : `(${den.join('·')})`);
  }
  return { text, factor };
}

function scaled(x: any, factor: number): any {
  if (typeof x === 'number') {
    return x / factor;
  }
  if (Array.isArray(x)) {
    return x.map(e => scaled(e, factor));
  }
  if (x && typeof x === 'object' && 're' in x) {
    return { re: x.re / factor, im: x.im / factor };
  }
  return x;
}

/** A tagged value as text: `26.45 Ω`, `[1, 2, 3] m`, `{a: 1 m, b: 2 s}`; in its row's display
 * unit when it has one (`2.25 kN·m`, issue 18); a temperature point on the scale it was given in
 * (`14.2 °C`), as the notebook shows it. */
export function valueText(v: any, unit?: unknown): string {
  if (v === null || v === undefined) {
    return '(deleted)';
  }
  if (typeof v !== 'object') {
    return String(v);
  }
  const scale = v.kind === 'point' ? SCALES[v.scale] : undefined;
  if (scale && ('num' in v || 'array' in v)) {
    const [symbol, to] = scale;
    const mag = 'num' in v ? numText(to(v.num)) : bare(onScale(v.array, to));
    return `${mag} ${symbol}`;
  }
  const shown = shownUnit(unit, v.dim);
  const unitName = shown ? shown.text : unitText(v.dim);
  const k = shown ? shown.factor : 1;
  const u = unitName ? ' ' + unitName : '';
  if ('num' in v) {
    return numText(v.num / k) + u;
  }
  if ('re' in v) {
    const text = complexText(v.re / k, v.im / k);
    return (unitName ? `(${text})` : text) + u;
  }
  if ('mag' in v) {
    return `${numText(v.mag / k)}∠${numText(v.ang)} rad` + u;
  }
  if ('array' in v) {
    return bare(scaled(v.array, k)) + u;
  }
  if ('object' in v && v.object && typeof v.object === 'object') {
    return (
      '{' +
      Object.entries(v.object)
        .map(([k, x]) => `${k}: ${valueText(x)}`)
        .join(', ') +
      '}'
    );
  }
  return JSON.stringify(v);
}
