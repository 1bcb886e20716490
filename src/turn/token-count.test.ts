import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { EXACT_CHARS, SLICE_CHARS, TokenCounter, YIELD_BYTES } from './token-count.ts';

const prose = (words: number): string =>
  Array.from({ length: words }, (_, i) => ['the', 'release', 'is', 'on', 'the', '9th,'][i % 6])
    .join(' ')
    .concat('\n\nDone.  Really   done. 🙂 “quoted” d\u2019accord');

describe('TokenCounter', () => {
  it('counts text with spaces exactly, however long', async () => {
    for (const text of ['', 'hi', prose(10), prose(2000), `  ${prose(500)}  \n`]) {
      expect(await new TokenCounter().count(text)).toBe(countTokens(text));
    }
  });

  it('prices a long run without spaces slice by slice, near the exact count', async () => {
    const run = 'xQ7!'.repeat(2000) + '🙂'.repeat(SLICE_CHARS);
    const counted = await new TokenCounter().count(run);
    const exact = countTokens(run);
    const slices = Math.ceil(run.length / SLICE_CHARS);
    expect(Math.abs(counted - exact)).toBeLessThanOrEqual(slices);
  });

  it('gives the event loop its turn every YIELD_BYTES counted, across texts', async () => {
    for (const text of ['ab'.repeat(YIELD_BYTES * 4), '的一是'.repeat(YIELD_BYTES)]) {
      const counter = new TokenCounter();
      // Other work queued on the event loop (a chain of immediates, as an I/O callback would be)
      // runs while the text is counted: no wall-clock timer, so a fast machine cannot miss it.
      let turns = 0;
      let counting = true;
      const other = () => {
        turns++;
        if (counting) setImmediate(other);
      };
      setImmediate(other);
      try {
        await counter.count(text);
      } finally {
        counting = false;
      }
      const bytes = Buffer.byteLength(text);
      expect(counter.yields).toBeGreaterThanOrEqual(Math.floor(bytes / YIELD_BYTES) - 1);
      expect(turns).toBeGreaterThan(0);
    }
    // Many short texts share one allowance: a history of small messages yields too. (Each is
    // its own: a text counted before is a cache hit, and counts nothing.)
    const counter = new TokenCounter();
    for (let i = 0; i < 100; i++) await counter.count(`${i}: ${'x'.repeat(200)}`);
    expect(counter.yields).toBeGreaterThanOrEqual(Math.floor((100 * 200) / YIELD_BYTES) - 1);
  });

  it('prices what is past the exact limit at one token per UTF-8 byte', async () => {
    const head = 'word '.repeat(EXACT_CHARS / 4).slice(0, EXACT_CHARS);
    const tail = 'é'.repeat(10);
    const counter = new TokenCounter();
    expect(await counter.count(head + tail)).toBe((await counter.count(head)) + 20);
  });

  it('cuts to a prefix that counts no more than asked', async () => {
    const counter = new TokenCounter();
    for (const text of [prose(3000), 'a'.repeat(5000)]) {
      for (const tokens of [0, 1, 7, 100, 1000]) {
        const cut = await counter.cut(text, tokens);
        expect(text.startsWith(cut)).toBe(true);
        expect(await counter.count(cut)).toBeLessThanOrEqual(tokens);
      }
      expect(await counter.cut(text, 1_000_000)).toBe(text);
    }
  });

  it('counts a text it saw lately from memory, to the same figure', async () => {
    const text = `${prose(1500)} (counted twice)`;
    const first = new TokenCounter();
    const n = await first.count(text);
    expect(first.yields).toBeGreaterThan(0);
    const again = new TokenCounter();
    expect(await again.count(text)).toBe(n);
    expect(again.yields).toBe(0);
    expect(n).toBe(countTokens(text));
  });
});
