/*
 * A static check that an operator's regular expression cannot backtrack catastrophically on
 * V8's backtracking engine (no native re2-class dependency; see docs/decisions/0012). It accepts
 * a subset of JavaScript patterns where every match attempt is linear in the input:
 *
 * - no backreferences, no lookaround, no `v` flag;
 * - a quantifier applies to a single character (literal, class, escape, `.`) or to a group with no
 *   quantifier and no alternation inside (star height one, no empty or ambiguous loop);
 * - an alternation that is not the whole pattern holds no repeat (`*`, `+`, `{n,m}`);
 * - two repeats in one sequence are separated by a mandatory character the first cannot match
 *   (`(\w+) (\S+)` passes; `.*.*x`, `\w+\w+` and `(a+)+` do not).
 *
 * With the input matched capped (MAX_MATCH_CHARS) the worst search is quadratic in that cap.
 */

/** Longest pattern accepted. */
export const MAX_PATTERN_CHARS = 256;
/** Characters of the input a rule is matched against; the rest is not looked at. */
export const MAX_MATCH_CHARS = 2048;

type Ranges = readonly (readonly [number, number])[];
const ALL: Ranges = [[0, 0x10ffff]];
const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
const SPACE: Ranges = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];

function complement(r: Ranges): Ranges {
  const sorted = [...r].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of sorted) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

function overlaps(a: Ranges, b: Ranges): boolean {
  return a.some(([lo, hi]) => b.some(([l, h]) => lo <= h && l <= hi));
}

/** Under `i`, ASCII letters gain their other case and anything non-ASCII widens to all of it. */
function fold(r: Ranges, ignoreCase: boolean): Ranges {
  if (!ignoreCase) return r;
  const out: [number, number][] = [...r.map(([lo, hi]) => [lo, hi] as [number, number])];
  for (const [lo, hi] of r) {
    for (const [a, z, shift] of [
      [0x41, 0x5a, 0x20],
      [0x61, 0x7a, -0x20],
    ] as const) {
      const l = Math.max(lo, a);
      const h = Math.min(hi, z);
      if (l <= h) out.push([l + shift, h + shift]);
    }
    if (hi >= 0x80) out.push([0x80, 0x10ffff]);
  }
  return out;
}

/** One element of a sequence, as the check sees it. */
interface Item {
  /** The characters it can start with; undefined for an assertion (`^`, `$`, `\b`). */
  readonly first: Ranges | undefined;
  /** Its quantifier may take it more than once. */
  readonly repeats: boolean;
  /** It may match nothing. */
  readonly optional: boolean;
  /** It consumes exactly one character (a separator candidate). */
  readonly single: boolean;
}

/** Thrown inside the parser; turned into the caller's error with the reason. */
export class UnsafePattern extends Error {}

class Parser {
  i = 0;
  constructor(
    readonly src: string,
    readonly ignoreCase: boolean,
  ) {}

  fail(reason: string): never {
    throw new UnsafePattern(reason);
  }

  peek(): string | undefined {
    return this.src[this.i];
  }

  /** Code point at the cursor, advancing past it. */
  codePoint(): number {
    const cp = this.src.codePointAt(this.i) ?? 0;
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** An escape after `\`: its characters, or undefined for an assertion. */
  escape(inClass: boolean): Ranges | undefined {
    const c = this.src[this.i++];
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return complement(DIGIT);
      case 'w':
        return WORD;
      case 'W':
        return complement(WORD);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 'p':
      case 'P':
        if (this.peek() === '{') this.i = this.src.indexOf('}', this.i) + 1 || this.src.length;
        return ALL;
      case 'b':
        return inClass ? [[8, 8]] : undefined;
      case 'B':
        return undefined;
      case 'k':
        return this.fail('uses a backreference');
      case 'n':
        return [[10, 10]];
      case 't':
        return [[9, 9]];
      case 'r':
        return [[13, 13]];
      case 'f':
        return [[12, 12]];
      case 'v':
        return [[11, 11]];
      case 'c':
        this.i++;
        return ALL;
      case 'x':
        this.i += 2;
        return ALL;
      case 'u':
        if (this.peek() === '{') {
          const end = this.src.indexOf('}', this.i);
          this.i = end < 0 ? this.src.length : end + 1;
        } else this.i += 4;
        return ALL;
      case undefined:
        return this.fail('ends in an escape');
      default:
        if (/[1-9]/.test(c) && !inClass) return this.fail('uses a backreference');
        if (c === '0') return [[0, 0]];
        return fold([[c.codePointAt(0) ?? 0, c.codePointAt(0) ?? 0]], this.ignoreCase);
    }
  }

  charClass(): Ranges {
    const negated = this.peek() === '^';
    if (negated) this.i++;
    const out: (readonly [number, number])[] = [];
    let first = true;
    while (this.peek() !== ']' || first) {
      first = false;
      if (this.peek() === undefined) this.fail('has an unclosed class');
      let lo: Ranges | undefined;
      let cp: number | undefined;
      if (this.peek() === '\\') {
        this.i++;
        lo = this.escape(true) ?? [];
        if (lo.length === 1 && lo[0]?.[0] === lo[0]?.[1]) cp = lo[0]?.[0];
      } else {
        cp = this.codePoint();
        lo = [[cp, cp]];
      }
      if (this.peek() === '-' && this.src[this.i + 1] !== ']' && cp !== undefined) {
        this.i++;
        let to: number;
        if (this.peek() === '\\') {
          this.i++;
          const r = this.escape(true) ?? [];
          to = r.length === 1 ? (r[0]?.[1] ?? 0x10ffff) : 0x10ffff;
        } else to = this.codePoint();
        out.push([cp, Math.max(cp, to)]);
      } else out.push(...lo);
    }
    this.i++;
    const set = fold(out, this.ignoreCase);
    return negated ? complement(set) : set;
  }

  /** A quantifier at the cursor: [min, max], or undefined. */
  quantifier(): [number, number] | undefined {
    const c = this.peek();
    let q: [number, number] | undefined;
    if (c === '*') q = [0, Infinity];
    else if (c === '+') q = [1, Infinity];
    else if (c === '?') q = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return undefined;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
      q = [min, max];
    }
    if (!q) return undefined;
    this.i++;
    if (this.peek() === '?') this.i++;
    return q;
  }

  /** Parses alternatives until `)` or the end; returns each alternative's items. */
  alternatives(): Item[][] {
    const branches: Item[][] = [[]];
    while (this.i < this.src.length && this.peek() !== ')') {
      if (this.peek() === '|') {
        this.i++;
        branches.push([]);
        continue;
      }
      branches.at(-1)?.push(...this.term());
    }
    return branches;
  }

  /** One atom with its quantifier; a plain group is spliced into the sequence. */
  term(): Item[] {
    const c = this.src[this.i++];
    let first: Ranges | undefined;
    let group: Item[][] | undefined;
    if (c === '(') {
      if (this.src.startsWith('?=', this.i) || this.src.startsWith('?!', this.i))
        this.fail('uses lookaround');
      if (this.src.startsWith('?<=', this.i) || this.src.startsWith('?<!', this.i))
        this.fail('uses lookaround');
      if (this.src.startsWith('?:', this.i)) this.i += 2;
      else if (this.src.startsWith('?<', this.i)) this.i = this.src.indexOf('>', this.i) + 1;
      else if (this.peek() === '?') this.fail('uses an unsupported group');
      group = this.alternatives();
      if (this.peek() !== ')') this.fail('has an unclosed group');
      this.i++;
    } else if (c === '[') first = this.charClass();
    else if (c === '\\') first = this.escape(false);
    else if (c === '^' || c === '$') first = undefined;
    else if (c === '.') first = ALL;
    else {
      this.i--;
      const cp = this.codePoint();
      first = fold([[cp, cp]], this.ignoreCase);
    }
    const q = this.quantifier();
    const repeats = q !== undefined && q[1] > 1;
    const optional = q !== undefined && q[0] === 0;
    if (group) {
      const inner = group.flat();
      if (q && inner.some((x) => x.repeats || x.optional))
        this.fail('quantifies a group that holds a quantifier');
      if (group.length > 1) {
        if (inner.some((x) => x.repeats)) this.fail('repeats inside an alternation');
        if (repeats) this.fail('repeats an alternation');
        const starts = group.map((b) => firstOf(b));
        return [
          {
            first: starts.includes(undefined) ? ALL : starts.flatMap((s) => s ?? []),
            repeats: false,
            optional: optional || group.some((b) => b.every((x) => x.optional || !x.first)),
            single: false,
          },
        ];
      }
      if (!q) return inner;
      if (inner.every((x) => !x.first)) this.fail('quantifies something that can match nothing');
      return [{ first: firstOf(inner) ?? ALL, repeats, optional, single: false }];
    }
    if (q && first === undefined) this.fail('quantifies an assertion');
    return [{ first, repeats, optional, single: first !== undefined && !q }];
  }
}

function firstOf(items: readonly Item[]): Ranges | undefined {
  const out: (readonly [number, number])[] = [];
  for (const item of items) {
    if (!item.first) continue;
    out.push(...item.first);
    if (!item.optional) return out;
  }
  return out.length === 0 ? undefined : out;
}

/** Every repeat must be cut off from the next one by a mandatory character it cannot match. */
function checkSequence(items: readonly Item[]): void {
  let open: Ranges | undefined;
  for (const item of items) {
    if (!item.first) continue;
    if (open && item.single && !item.optional && !overlaps(open, item.first)) open = undefined;
    if (item.repeats) {
      if (open) throw new UnsafePattern('has two repeats that can match the same text');
      open = item.first;
    }
  }
}

/**
 * Why `pattern` (with `flags`) is refused, or undefined when it is safe to match against
 * input capped at MAX_MATCH_CHARS. The reason names the construct, never the pattern.
 */
export function unsafePatternReason(pattern: string, flags: string): string | undefined {
  if (pattern.length > MAX_PATTERN_CHARS) return `is longer than ${MAX_PATTERN_CHARS} characters`;
  if (!/^[imsu]*$/.test(flags)) return 'uses a flag other than i, m, s and u';
  try {
    const parser = new Parser(pattern, flags.includes('i'));
    const branches = parser.alternatives();
    if (parser.i < pattern.length) return 'has an unmatched parenthesis';
    for (const branch of branches) checkSequence(branch);
    return undefined;
  } catch (error) {
    if (error instanceof UnsafePattern) return error.message;
    throw error;
  }
}
