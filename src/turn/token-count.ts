import { countTokens, decode, encode } from 'gpt-tokenizer';

/*
 * The tokenizer's byte-pair merge is quadratic in the length of one pre-token piece, and a run
 * without spaces is one piece: 99 KB of one letter took seconds, on the event loop. So text is
 * handed to it in slices of at most SLICE_CHARS, and the counter yields to the event loop every
 * YIELD_BYTES (UTF-8) counted: a slice of the worst input costs a few milliseconds, so the loop is
 * never held for more than about ten, whatever the input.
 *
 * Slices are cut where a space follows a non-space: the tokenizer's split pattern always starts a
 * new piece there, and pieces are encoded independently, so such a cut is exact. A run of more
 * than SLICE_CHARS without one is cut every SLICE_CHARS (never inside a surrogate pair) and is
 * priced slice by slice, which lands within a token or so per slice of the exact figure (slightly
 * above it, in practice). Past EXACT_CHARS of one text, the rest is priced at one token per UTF-8
 * byte, the most any byte-level encoding can take: a bound, never an undercount.
 */

/** The longest text handed to the tokenizer at once. */
export const SLICE_CHARS = 256;
/** UTF-8 bytes counted between yields to the event loop (the merge's cost grows with bytes). */
export const YIELD_BYTES = 2048;
/** Characters of one text counted exactly; the rest is priced at one token per UTF-8 byte. */
export const EXACT_CHARS = 1 << 20;

/** Where the slice starting at `start` ends (exclusive). */
function sliceEnd(text: string, start: number): number {
  const hard = start + SLICE_CHARS;
  if (hard >= text.length) return text.length;
  for (let i = hard; i > start + 1; i--) {
    if (text.charCodeAt(i) === 0x20 && !/\s/.test(text.charAt(i - 1))) return i;
  }
  const last = text.charCodeAt(hard - 1);
  return last >= 0xd800 && last <= 0xdbff ? hard - 1 : hard;
}

/** UTF-8 length of `text` from `start`, up to `end`. */
function utf8Bytes(text: string, start = 0, end = text.length): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Counts of texts seen lately: the system prompt, memory and tool schemas are the same text every
 * round of a turn and across turns, and every message of a round is counted again by each later
 * request of the round. Counting is a pure function of the text, so a hit is exact. Texts of up to
 * CACHED_MAX_CHARS are kept, most recently used last, until they hold CACHED_CHARS in all.
 */
const CACHED_MAX_CHARS = 64 * 1024;
const CACHED_CHARS = 4 * 1024 * 1024;
const counted = new Map<string, number>();
let countedChars = 0;

function remember(text: string, tokens: number): void {
  countedChars += text.length;
  counted.set(text, tokens);
  for (const oldest of counted.keys()) {
    if (countedChars <= CACHED_CHARS) break;
    counted.delete(oldest);
    countedChars -= oldest.length;
  }
}

/** Gives pending I/O and timers their turn. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Counts tokens (o200k, as `gpt-tokenizer` does) without holding the event loop: one counter per
 * request being fitted, so that many small texts share the yielding as one long text does.
 */
export class TokenCounter {
  #sinceYield = 0;
  #yields = 0;

  /** How often this counter gave the event loop its turn. */
  get yields(): number {
    return this.#yields;
  }

  async #exact(slice: string): Promise<number> {
    const n = countTokens(slice);
    this.#sinceYield += utf8Bytes(slice);
    if (this.#sinceYield >= YIELD_BYTES) {
      this.#sinceYield = 0;
      this.#yields++;
      await nextTurn();
    }
    return n;
  }

  /** The tokens of `text`, by the rule above. */
  async count(text: string): Promise<number> {
    const cacheable = text.length <= CACHED_MAX_CHARS;
    const known = cacheable ? counted.get(text) : undefined;
    if (known !== undefined) {
      // Most recently used last: the oldest is what goes when the cache is full.
      counted.delete(text);
      counted.set(text, known);
      return known;
    }
    const n = await this.#countUncached(text);
    if (cacheable) remember(text, n);
    return n;
  }

  async #countUncached(text: string): Promise<number> {
    const exactEnd = Math.min(text.length, EXACT_CHARS);
    let n = 0;
    let start = 0;
    while (start < exactEnd) {
      const end = Math.min(sliceEnd(text, start), exactEnd);
      n += await this.#exact(text.slice(start, end));
      start = end;
    }
    return n + utf8Bytes(text, start);
  }

  /** The longest prefix of `text` that counts at most `tokens`, by the same rule. */
  async cut(text: string, tokens: number): Promise<string> {
    if (tokens <= 0) return '';
    const exactEnd = Math.min(text.length, EXACT_CHARS);
    let used = 0;
    let start = 0;
    while (start < exactEnd) {
      const end = Math.min(sliceEnd(text, start), exactEnd);
      const slice = text.slice(start, end);
      const n = await this.#exact(slice);
      if (used + n > tokens)
        return text.slice(0, start) + decode(encode(slice).slice(0, tokens - used));
      used += n;
      start = end;
    }
    let end = start;
    while (end < text.length) {
      const step = text.charCodeAt(end) >= 0xd800 && text.charCodeAt(end) <= 0xdbff ? 2 : 1;
      const bytes = utf8Bytes(text, end, end + step);
      if (used + bytes > tokens) break;
      used += bytes;
      end += step;
    }
    return text.slice(0, end);
  }
}
