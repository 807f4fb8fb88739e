// test/vectors/jcs/make_vectors.mjs: writes okno's RFC 8785 (JCS) test
// vectors with implementations that share nothing with okno's C code:
//
//   numbers.tsv    hex<TAB>expected: the IEEE-754 bits of a double (16
//                  lowercase hex digits) and String(x), which is
//                  ECMAScript's Number::toString as Node implements it
//   documents.tsv  input<TAB>expected: a JSON text and
//                  canonicalize(JSON.parse(input)), where canonicalize is
//                  the npm package of RFC 8785's JavaScript reference
//                  implementation (version pinned in package.json)
//
// In documents.tsv the input's bytes %, TAB, LF and CR are written %25,
// %09, %0A and %0D (they occur in the input's whitespace and strings' raw
// "%"); the expected text has no TAB, LF or CR and is written as is.
// Lines starting with "#" are comments.
//
// Run through ./make_vectors.sh, which installs the pinned package into a
// temporary directory and runs this script there:
//
//     node make_vectors.mjs OUTPUT_DIRECTORY
//
// A fixed seed makes the output the same on every run.
import canonicalize from 'canonicalize';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const outDir = process.argv[2];
if (!outDir) {
  console.error('usage: node make_vectors.mjs OUTPUT_DIRECTORY');
  process.exit(2);
}

// --- a seeded generator (mulberry32), so the vectors are reproducible ---
let seed = 0x8785;
function u32 () {
  seed = (seed + 0x6D2B79F5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}
function below (n) { return u32() % n; }
function chance (p) { return u32() / 4294967296 < p; }
function pick (a) { return a[below(a.length)]; }
function between (lo, hi) { return lo + below(hi - lo + 1); }

// --- doubles and their bits ---
const view = new DataView(new ArrayBuffer(8));
function bitsOf (x) { view.setFloat64(0, x); return view.getBigUint64(0); }
function fromBits (b) { view.setBigUint64(0, BigInt.asUintN(64, b)); return view.getFloat64(0); }
function hexOf (x) { return bitsOf(x).toString(16).padStart(16, '0'); }
function nextUp (x) {
  if (x === 0) return 5e-324;
  const b = bitsOf(x);
  return fromBits(x > 0 ? b + 1n : b - 1n);
}
function nextDown (x) { return -nextUp(-x); }

// ======================= numbers.tsv =======================
const numbers = new Map();
function addNumber (x) {
  if (Number.isFinite(x) && !numbers.has(hexOf(x))) {
    numbers.set(hexOf(x), String(x));
  }
}
function addAround (x, steps) {
  let up = x;
  let down = x;
  addNumber(x);
  for (let i = 0; i < steps; i++) {
    up = nextUp(up);
    down = nextDown(down);
    addNumber(up);
    addNumber(down);
  }
}

// the values of RFC 8785's Appendix B and other landmarks
for (const h of ['0000000000000000', '8000000000000000', '0000000000000001',
  '8000000000000001', '7fefffffffffffff', 'ffefffffffffffff',
  '4340000000000000', 'c340000000000000', '4430000000000000',
  '44b52d02c7e14af5', '44b52d02c7e14af6', '44b52d02c7e14af7',
  '444b1ae4d6e2ef4e', '444b1ae4d6e2ef4f', '444b1ae4d6e2ef50',
  '3eb0c6f7a0b5ed8c', '3eb0c6f7a0b5ed8d', '41b3de4355555553',
  '41b3de4355555554', '41b3de4355555555', '41b3de4355555556',
  '41b3de4355555557', 'becbf647612f3696', '43143ff3c1cb0959']) {
  addNumber(fromBits(BigInt('0x' + h)));
}
addAround(2.2250738585072014e-308, 20);	// the least normal double
addAround(Number.MAX_VALUE, 20);
addAround(5e-324, 20);
for (const x of [1, 0.1, 0.2, 0.3, 1 / 3, 2 / 3, Math.PI, Math.E, 100, 1e15,
  1e16, 1e17, 123456789012345680000]) {
  addAround(x, 3);
  addAround(-x, 3);
}

// every power of two and its neighbours (the asymmetric rounding intervals)
for (let e = -1074; e <= 1023; e++) {
  const x = 2 ** e;
  addNumber(x);
  addNumber(nextUp(x));
  addNumber(nextDown(x));
}

// integers around 2^53, and the layout boundaries of Number::toString
addAround(2 ** 53, 100);
addAround(-(2 ** 53), 20);
addAround(2 ** 54, 20);
for (const x of [1e21, 1e20, 999999999999999900000, 1e22, 1e-6, 1e-7,
  0.000001234, 1.234e-7, 123456789012345680000, 1.2345678901234567e21]) {
  addAround(x, 40);
  addAround(-x, 5);
}
for (let e = -330; e <= 310; e++) {
  addNumber(Number('1e' + e));
  addNumber(Number('9.999999999999999e' + e));
}

// random bit patterns: every exponent, both signs
for (let i = 0; i < 7000; i++) {
  addNumber(fromBits((BigInt(u32()) << 32n) | BigInt(u32())));
}
// random subnormals
for (let i = 0; i < 1000; i++) {
  const b = ((BigInt(u32()) & 0xfffffn) << 32n) | BigInt(u32());
  addNumber(fromBits(chance(0.5) ? b : b | (1n << 63n)));
}
// random short decimals: 1 to 15 digits, small exponents
function digitString (n) {
  let s = String(between(1, 9));
  while (s.length < n) s += String(below(10));
  return s;
}
for (let i = 0; i < 3000; i++) {
  addNumber(Number((chance(0.3) ? '-' : '') + digitString(between(1, 15)) +
    'e' + between(-30, 25)));
}
// random 16- and 17-digit decimals across the whole range
for (let i = 0; i < 1500; i++) {
  addNumber(Number(digitString(between(16, 17)) + 'e' + between(-340, 292)));
}
// random integers below and above 2^53
for (let i = 0; i < 1000; i++) {
  addNumber(Number(digitString(between(14, 22))));
}

let numbersText = '# RFC 8785 number vectors: hex<TAB>expected, made by make_vectors.mjs with\n' +
  `# String(x) of Node ${process.version}; see README.md\n`;
for (const [h, s] of numbers) numbersText += `${h}\t${s}\n`;
writeFileSync(join(outDir, 'numbers.tsv'), numbersText);

// ======================= documents.tsv =======================

// number texts in every form RFC 8259 allows
function numberText () {
  for (;;) {
    const sign = chance(0.25) ? '-' : '';
    let t;
    switch (below(12)) {
      case 0: t = pick(['0', '-0', '0.0', '-0.0', '0e5', '0E-999', '1', '10', '100']); break;
      case 1: t = String(between(0, 100000)); break;
      case 2: t = digitString(between(1, 6)) + '.' + digitString(between(1, 6)) + '0'.repeat(below(3)); break;
      case 3: t = digitString(between(1, 4)) + pick(['e', 'E']) + pick(['', '+', '-']) + between(0, 40); break;
      case 4: t = '0.' + '0'.repeat(below(10)) + digitString(between(1, 8)); break;
      case 5: t = digitString(between(16, 40)); break;
      case 6: t = digitString(between(1, 3)) + '.' + digitString(between(15, 40)); break;
      case 7: t = Number(fromBits((BigInt(u32()) << 32n) | BigInt(u32()))).toPrecision(17); break;
      case 8: t = pick(['5e-324', '1.7976931348623157e308', '9007199254740993',
        '333333333.33333329', '0.000000000000000000000000001', '1e21', '1e20',
        '1E30', '4.50', '2e-3', '1e-7', '0.000001', '123456789012345678901',
        '2.2250738585072014e-308', '3e-324', '1.0000000000000001e23']); break;
      case 9: t = String(between(1, 999)) + 'e' + between(-12, 25); break;
      case 10: t = digitString(between(1, 17)) + 'e' + between(-320, 290); break;
      default: t = String(below(2 ** 31)) + '.' + String(below(1000)).padStart(3, '0'); break;
    }
    t = sign + t;
    if (!/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t)) continue;
    const x = Number(t);
    // okno refuses what overflows and what is non-zero but rounds to zero
    if (!Number.isFinite(x)) continue;
    if (x === 0 && /[1-9]/.test(t.replace(/[eE].*$/, ''))) continue;
    return t;
  }
}

// characters: every class the writer treats differently
function randomChar () {
  switch (below(14)) {
    case 0: return String.fromCodePoint(below(0x20));
    case 1: return pick(['"', '\\', '/', '\u007f', '\u2028', '\u2029', '\ufeff', '\u0000']);
    case 2: return String.fromCodePoint(between(0x80, 0x7ff));
    case 3: return String.fromCodePoint(between(0x800, 0xd7ff));
    case 4: return String.fromCodePoint(between(0xe000, 0xffff));
    case 5: return String.fromCodePoint(between(0x10000, 0x10ffff));
    case 6: return pick(['\u20ac', '\ufb33', '\u00f6', '\u0080', '\ud83d\ude00', '\uffff', '\ue000', '\u{10000}', '\u{10ffff}']);
    default: return String.fromCodePoint(between(0x20, 0x7e));
  }
}
function randomString (max) {
  let s = '';
  const n = below(max + 1);
  for (let i = 0; i < n; i++) s += randomChar();
  return s;
}
const keyPool = ['', 'a', 'ab', 'abc', 'b', 'B', 'id', 'name', 'starts_at',
  '1', '10', '2', '\r', '\u20ac', '\ufb33', '\ud83d\ude00', '\u0080', '\u00f6',
  '\ue000', '\uffff', '\u{10000}', '\u{10ffff}', 'a\ue000', 'a\u{10000}',
  'a\uffff', 'a\u{1f600}', '\u0000', '\u001f', ' ', '"', '\\', 'z\u2028'];
function randomKey () {
  return chance(0.5) ? pick(keyPool) : randomString(8);
}

function randomValue (depth) {
  const r = below(depth >= 4 ? 6 : 9);
  switch (r) {
    case 0: return { t: 'lit', v: pick(['null', 'true', 'false']) };
    case 1: case 2: return { t: 'num', v: numberText() };
    case 3: case 4: case 5: return { t: 'str', v: randomString(12) };
    case 6: {
      const items = [];
      const n = below(6);
      for (let i = 0; i < n; i++) items.push(randomValue(depth + 1));
      return { t: 'arr', v: items };
    }
    default: return randomObject(depth);
  }
}
function randomObject (depth) {
  const members = [];
  const seen = new Set();
  const n = below(8);
  for (let i = 0; i < n; i++) {
    const k = randomKey();
    if (seen.has(k) || k === '__proto__') continue;
    seen.add(k);
    members.push([k, randomValue(depth + 1)]);
  }
  return { t: 'obj', v: members };
}

// the input text: random whitespace, escapes and member order
function ws () { return chance(0.6) ? '' : pick([' ', '\n', '\t', '\r\n', '  ', ' \n\t', '\r']); }
function hex4 (c) {
  const h = c.toString(16).padStart(4, '0');
  return '\\u' + (chance(0.5) ? h : h.toUpperCase());
}
function encodeString (s) {
  const short = { 8: '\\b', 9: '\\t', 10: '\\n', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (c < 0x20 || c === 34 || c === 92) {
      out += short[c] !== undefined && chance(0.7) ? short[c] : hex4(c);
    } else if (c === 47) {
      out += chance(0.3) ? '\\/' : '/';
    } else if (chance(0.15)) {
      out += c > 0xffff ? hex4(ch.charCodeAt(0)) + hex4(ch.charCodeAt(1)) : hex4(c);
    } else {
      out += ch;
    }
  }
  return out + '"';
}
function encode (v) {
  switch (v.t) {
    case 'lit': case 'num': return v.v;
    case 'str': return encodeString(v.v);
    case 'arr': return '[' + ws() + v.v.map((x) => encode(x)).join(ws() + ',' + ws()) + ws() + ']';
    default: {
      const m = v.v.slice();
      for (let i = m.length - 1; i > 0; i--) {
        const j = below(i + 1);
        [m[i], m[j]] = [m[j], m[i]];
      }
      return '{' + ws() + m.map(([k, x]) => encodeString(k) + ws() + ':' + ws() + encode(x))
        .join(ws() + ',' + ws()) + ws() + '}';
    }
  }
}

const documents = [
  // RFC 8785 section 3.2.2 and 3.2.3
  '{\n  "numbers": [333333333.33333329, 1E30, 4.50,\n              2e-3, 0.000000000000000000000000001],\n' +
  '  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
  '{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n' +
  '  "1": "One",\n  "\\ud83d\\ude00": "Emoji: Grinning Face",\n  "\\u0080": "Control",\n' +
  '  "\\u00f6": "Latin Small Letter O With Diaeresis"\n}',
  '[]', '{}', '""', '0', '-0', 'null', ' true ', '\tfalse\n', '[1e21,1e-7,-0.0]',
  '{"a":{"b":{"c":{"d":[[[[]]]]}}}}'
];
for (let i = 0; i < 400; i++) {
  const top = chance(0.8) ? randomObject(0) : randomValue(0);
  documents.push(ws() + encode(top) + ws());
}

let documentsText = '# RFC 8785 document vectors: input<TAB>expected, made by make_vectors.mjs with\n' +
  `# canonicalize(JSON.parse(input)), npm canonicalize 4.0.0 on Node ${process.version};\n` +
  '# in the input %, TAB, LF and CR are written %25, %09, %0A, %0D; see README.md\n';
for (const input of documents) {
  const expected = canonicalize(JSON.parse(input));
  if (/[\t\n\r]/.test(expected)) throw new Error('raw TAB, LF or CR in ' + expected);
  const enc = input.replace(/[%\t\n\r]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
  documentsText += `${enc}\t${expected}\n`;
}
writeFileSync(join(outDir, 'documents.tsv'), documentsText);

console.log(`numbers.tsv: ${numbers.size} vectors; documents.tsv: ${documents.length} vectors`);
