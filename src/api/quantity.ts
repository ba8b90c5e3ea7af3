// Kubernetes' resource.Quantity: the grammar of apimachinery's ParseQuantity (sign, digits, optional
// fraction, then a binary/decimal SI suffix or an exponent), held exactly as a rational number.

const formatWrong = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const suffixWrong = "unable to parse quantity's suffix";

export class QuantityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuantityError';
  }
}

export interface Quantity {
  readonly text: string;
  /** The value ×1000, rounded away from zero (Quantity.MilliValue). */
  milliValue(): bigint;
  /** The value rounded away from zero to an integer (Quantity.Value). */
  value(): bigint;
  /** -1, 0 or 1 as this quantity is less than, equal to or greater than o. */
  cmp(o: Quantity): number;
}

/** Suffix → value multiplier as base^exponent (apimachinery's suffixer tables). */
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

interface Parsed {
  positive: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** A step-by-step port of parseQuantityString, so the same inputs are accepted and rejected. */
function parseQuantityString(str: string): Parsed {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (pos < end) {
    if (str[0] === '-') {
      positive = false;
      pos++;
    } else if (str[0] === '+') {
      pos++;
    }
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '' };

  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  pos = i;
  if (num === '') num = '0';
  if (pos >= end) return { positive, num, denom: '', suffix: '' };

  let denom = '';
  if (str[pos] === '.') {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    denom = str.slice(pos, i);
    pos = i;
    if (pos >= end) return { positive, num, denom, suffix: '' };
  }

  const suffixStart = pos;
  while (pos < end && 'eEinumkKMGTP'.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new QuantityError(formatWrong);
  return { positive, num, denom, suffix: str.slice(suffixStart) };
}

/** Interprets a suffix as (base, exponent), as the suffixer does; undefined when unknown. */
function interpretSuffix(suffix: string): { base: 2n | 10n; exponent: number } | undefined {
  if (suffix in binarySuffixes) return { base: 2n, exponent: binarySuffixes[suffix]! };
  if (suffix in decimalSuffixes) return { base: 10n, exponent: decimalSuffixes[suffix]! };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const exp = suffix.slice(1);
    if (/^[+-]?[0-9]+$/.test(exp)) {
      const n = Number.parseInt(exp, 10);
      // Go parses the exponent as an int32.
      if (n >= -2147483648 && n <= 2147483647) return { base: 10n, exponent: n };
    }
  }
  return undefined;
}

const maxInt64 = (1n << 63n) - 1n;

/** Division rounding away from zero, as Quantity's scaled conversions do. */
function divAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  if (n % d === 0n) return q;
  return n < 0n ? q - 1n : q + 1n;
}

class RationalQuantity implements Quantity {
  constructor(
    readonly text: string,
    /** value = numerator / denominator, denominator > 0. */
    private readonly numerator: bigint,
    private readonly denominator: bigint,
  ) {}

  milliValue(): bigint {
    return divAwayFromZero(this.numerator * 1000n, this.denominator);
  }

  value(): bigint {
    return divAwayFromZero(this.numerator, this.denominator);
  }

  cmp(o: Quantity): number {
    if (o instanceof RationalQuantity) {
      const l = this.numerator * o.denominator;
      const r = o.numerator * this.denominator;
      return l < r ? -1 : l > r ? 1 : 0;
    }
    const l = this.milliValue();
    const r = o.milliValue();
    return l < r ? -1 : l > r ? 1 : 0;
  }
}

/** Parses s by Kubernetes' Quantity grammar; throws QuantityError with the API server's message. */
export function parseQuantity(s: string): Quantity {
  if (s.length === 0) throw new QuantityError(formatWrong);
  const p = parseQuantityString(s);
  const interpreted = interpretSuffix(p.suffix);
  if (!interpreted) throw new QuantityError(suffixWrong);
  let numerator = BigInt(p.num + p.denom);
  let denominator = 10n ** BigInt(p.denom.length);
  // Tiny scales all round to the same milli/unit values; clamping keeps the arithmetic small.
  const exponent = Math.max(interpreted.exponent, -1000);
  if (exponent >= 0) numerator *= interpreted.base ** BigInt(Math.min(exponent, 1000));
  else denominator *= interpreted.base ** BigInt(-exponent);
  // Like the API server, magnitudes beyond int64 are capped at the largest int64.
  if (numerator / denominator > maxInt64) {
    numerator = maxInt64;
    denominator = 1n;
  }
  if (!p.positive) numerator = -numerator;
  return new RationalQuantity(s, numerator, denominator);
}

const decimalSuffixByExponent: Record<number, string> = { [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const binarySuffixByPower = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * The quantity rounded up to milli precision (as v1 defaulting rounds ResourceLists) and printed in
 * canonical form, as the API server serializes it: `0.5` → `500m`, `1.5Gi` → `1536Mi`, `1e3` → `1e3`.
 */
export function canonicalQuantity(s: string): string {
  const q = parseQuantity(s);
  const p = parseQuantityString(s);
  const milli = q.milliValue();
  if (milli === 0n) return '0';
  const sign = milli < 0n ? '-' : '';
  const abs = milli < 0n ? -milli : milli;
  const binary = p.suffix in binarySuffixes;
  if (binary && abs % 1000n === 0n && abs >= 1024000n) {
    let v = abs / 1000n;
    let power = 0;
    while (power < 6 && v % 1024n === 0n) {
      v /= 1024n;
      power++;
    }
    return `${sign}${v}${binarySuffixByPower[power]}`;
  }
  const exponentFormat = p.suffix.length > 0 && (p.suffix[0] === 'e' || p.suffix[0] === 'E') && !(p.suffix in decimalSuffixes);
  let mantissa = abs;
  let exponent = -3;
  while (exponent < 18 && mantissa % 1000n === 0n) {
    mantissa /= 1000n;
    exponent += 3;
  }
  const suffix = exponentFormat ? (exponent === 0 ? '' : `e${exponent}`) : decimalSuffixByExponent[exponent]!;
  return `${sign}${mantissa}${suffix}`;
}
