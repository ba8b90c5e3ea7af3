// Plain YAML scalars as kubectl reads them: go-yaml v2's resolver (gopkg.in/yaml.v2 v2.4.0
// resolve.go, forked unchanged by sigs.k8s.io/yaml) and sigs.k8s.io/yaml's conversion to JSON.

/** go-yaml's resolveMap: the YAML 1.1 booleans, nulls and float words it knows, spelled exactly so. */
const words = new Map<string, boolean | null | number>();
for (const w of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) words.set(w, true);
for (const w of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']) words.set(w, false);
for (const w of ['', '~', 'null', 'Null', 'NULL']) words.set(w, null);
for (const w of ['.nan', '.NaN', '.NAN']) words.set(w, NaN);
for (const w of ['.inf', '.Inf', '.INF']) words.set(w, Infinity).set(`+${w}`, Infinity).set(`-${w}`, -Infinity);

/** A number as go-yaml resolves it: an int (int64), a uint64 beyond int64, or a float64. */
export interface GoNumber {
  kind: 'int' | 'uint' | 'float';
  value: number;
  /** The exact integer, for int and uint. */
  exact?: bigint;
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;
const uint64Max = 2n ** 64n - 1n;

// strconv.ParseInt(s, 0, 64)'s syntax: a sign, then 0b/0o/0x digits, a legacy octal 0…, or decimal.
const goIntRe = /^([-+]?)(0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
// resolve.go's yamlStyleFloat, tried on the text without underscores.
const yamlStyleFloatRe = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
// strconv.ParseFloat's syntax for what starts with a dot: digits, underscores only between digits.
const dotFloatRe = /^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$/;
/** Decimal integers a double holds exactly, read without BigInt (the common case). */
const smallDecimalRe = /^[-+]?(?:0|[1-9][0-9]{0,14})$/;

/** An integer's int or uint64 reading, or undefined when strconv rejects it (syntax or range). */
function goInteger(sign: string, magnitude: bigint): GoNumber | undefined {
  const v = sign === '-' ? -magnitude : magnitude;
  if (v >= int64Min && v <= int64Max) return { kind: 'int', value: Number(v), exact: v };
  // ParseUint takes no sign.
  if (sign === '' && v <= uint64Max) return { kind: 'uint', value: Number(v), exact: v };
  return undefined;
}

/** The number a plain scalar starting with a digit, `+`, `-` or `.` resolves to, or undefined (a string). */
export function goNumber(s: string): GoNumber | undefined {
  const word = words.get(s);
  if (typeof word === 'number') return { kind: 'float', value: word };
  if (s[0] === '.') {
    // Not in the map: strconv.ParseFloat of the text as it is (overflow is an error: a string).
    if (!dotFloatRe.test(s)) return undefined;
    const f = Number(s.replaceAll('_', ''));
    return Number.isFinite(f) ? { kind: 'float', value: f } : undefined;
  }
  // Timestamps (2001-12-14) come first in go-yaml, but decoded into interface{} they stay strings,
  // as everything else of that shape does: nothing here reads them as numbers.
  if (smallDecimalRe.test(s)) {
    const v = Number(s) + 0; // -0 is the int 0
    return { kind: 'int', value: v, exact: BigInt(v) };
  }
  const plain = s.includes('_') ? s.replaceAll('_', '') : s;
  const int = goIntRe.exec(plain);
  if (int) {
    const body = int[2]!;
    const magnitude = /^0[0-7]/.test(body)
      ? BigInt(`0o${body.slice(1)}`)
      : BigInt(body.length > 1 && body[0] === '0' ? `0${body[1]!.toLowerCase()}${body.slice(2)}` : body);
    const n = goInteger(int[1]!, magnitude);
    if (n) return n;
  }
  if (yamlStyleFloatRe.test(plain)) {
    const f = Number(plain);
    if (Number.isFinite(f)) return { kind: 'float', value: f };
  }
  // resolve.go's own 0b branch: strconv.ParseInt(plain[2:], 2, 64), which takes a sign there.
  const bin = plain.startsWith('0b') ? /^([-+]?)([01]+)$/.exec(plain.slice(2)) : null;
  if (bin) return goInteger(bin[1]!, BigInt(`0b${bin[2]}`));
  return undefined;
}

/**
 * The value kubectl gives a plain (unquoted, untagged) scalar: null, a boolean, a number or the
 * text. `.inf` and `.nan` give ±Infinity and NaN, which kubectl cannot write as JSON
 * (`json: unsupported value`): the caller reports them.
 */
export function resolvePlainScalar(s: string): unknown {
  const c = s.charCodeAt(0);
  // go-yaml's resolveTable: only these first characters can make anything but a string.
  const isNumberStart = (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e; // 0-9 + - .
  if (isNumberStart) {
    const n = goNumber(s);
    return n ? n.value : s;
  }
  // The words of the map other than the float ones are five characters at most.
  const word = s.length > 5 ? undefined : words.get(s);
  return word === undefined ? s : word;
}

/** What kubectl says of a value JSON cannot hold (encoding/json's UnsupportedValueError). */
export function unsupportedValueMessage(v: number): string {
  return `error converting YAML to JSON: json: unsupported value: ${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}`;
}

/**
 * A resolved mapping key as sigs.k8s.io/yaml turns it into a JSON key: ints in decimal, floats as
 * Go's float32 `%g`, booleans as true/false; a null or uint64 key is an error (its message returned
 * as `error`).
 */
export function jsonKey(key: null | boolean | GoNumber): { key: string } | { error: string } {
  const unsupported = (type: string, shown: string) => ({ error: `error converting YAML to JSON: unsupported map key of type: ${type}, key: ${shown}` });
  if (key === null) return unsupported('%!s(<nil>)', '<nil>');
  if (typeof key === 'boolean') return { key: String(key) };
  if (key.kind === 'uint') return unsupported('uint64', `0x${key.exact!.toString(16)}`);
  if (key.kind === 'int') return { key: key.exact!.toString() };
  return { key: goFloat32String(key.value) };
}

/** strconv.FormatFloat(v, 'g', -1, 32), with go-yaml's names for the infinities and NaN. */
export function goFloat32String(v: number): string {
  const f = Math.fround(v);
  if (Number.isNaN(f)) return '.nan';
  if (f === Infinity) return '.inf';
  if (f === -Infinity) return '-.inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  // The fewest digits that read back as the same float32.
  let e = '';
  for (let p = 1; p <= 9; p++) {
    e = f.toExponential(p - 1);
    if (Math.fround(Number(e)) === f) break;
  }
  const [mantissa, expText] = e.split('e') as [string, string];
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const exp = Number(expText);
  // %e when the exponent is below -4 or at least 6 (Go's precision for shortest %g), else %f.
  if (exp < -4 || exp >= 6) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const frac = digits.slice(exp + 1);
  return `${sign}${digits.slice(0, exp + 1).padEnd(exp + 1, '0')}${frac ? `.${frac}` : ''}`;
}

/** The JSON key kubectl makes of a plain scalar key's text. */
export function plainKey(s: string): { key: string } | { error: string } {
  const c = s.charCodeAt(0);
  if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
    const n = goNumber(s);
    return n ? jsonKey(n) : { key: s };
  }
  const word = words.get(s);
  return word === undefined ? { key: s } : jsonKey(word as boolean | null);
}
