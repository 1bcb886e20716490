import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const decisions = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'docs', 'decisions');

describe('the decision records', () => {
  it('are each in the index, under the title they carry', () => {
    const index = readFileSync(join(decisions, 'README.md'), 'utf8');
    const records = readdirSync(decisions).filter((f) => /^\d{4}-.+\.md$/.test(f));
    expect(records.length).toBeGreaterThan(30);
    const missing = records.filter((f) => {
      const title = (readFileSync(join(decisions, f), 'utf8').split('\n')[0] ?? '').replace(
        /^# \d+( —|\.)? ?/,
        '',
      );
      return !index.includes(`[${title}](${f})`);
    });
    expect(missing).toEqual([]);
  });

  it('are numbered once each', () => {
    const numbers = readdirSync(decisions)
      .filter((f) => /^\d{4}-/.test(f))
      .map((f) => f.slice(0, 4));
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
