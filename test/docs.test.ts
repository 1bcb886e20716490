import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { operations } from '../src/app/operations/catalog.ts';
import { apiRoutes } from '../src/server/api.ts';
import { ROUTES_BEGIN, routeTables, unpadded, withRouteTables } from '../src/server/route-doc.ts';

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

describe("the README's screenshots", () => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  it('are committed under docs/screenshots as PNGs, and each is shown in the README', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const page of ['chat', 'run', 'usage']) {
      const file = join(root, 'docs', 'screenshots', `${page}.png`);
      const bytes = readFileSync(file);
      // A PNG's signature, and a size that holds a page (not an empty image).
      expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(bytes.byteLength).toBeGreaterThan(10_000);
      // Its width, from the IHDR chunk: taken at 1280 px.
      expect(bytes.readUInt32BE(16)).toBe(1280);
      expect(readme).toContain(`(docs/screenshots/${page}.png)`);
    }
  });
});

describe("docs/api.md's route tables", () => {
  const page = readFileSync(join(decisions, '..', 'api.md'), 'utf8');

  it('are what the catalog writes (run `npm run docs:api` after changing an operation)', () => {
    const written = withRouteTables(page, routeTables(apiRoutes));
    expect(written && unpadded(written)).toBe(unpadded(page));
  });

  it('read the same once a formatter has aligned them', () => {
    const aligned = page
      .replace(/^\| --- \| --- \|/m, '| ------ | -------- |')
      .replace(/^\| GET \|/m, '| GET    |');
    expect(unpadded(aligned)).toBe(unpadded(page));
  });

  it('list every operation of the catalog under its method and path', () => {
    for (const op of operations)
      expect(unpadded(page)).toContain(`|${op.http.method}|\`${op.http.path}\`|`);
  });

  it('are found only between their markers: a page without them is refused, not rewritten', () => {
    expect(withRouteTables(page.replace(ROUTES_BEGIN, ''), 'x')).toBeUndefined();
  });
});
