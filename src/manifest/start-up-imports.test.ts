import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** Every module specifier reachable from `entry` through relative imports. */
function reachable(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (fileName.startsWith('.')) visit(resolve(dirname(file), fileName));
      else packages.add(fileName);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('start-up verification', () => {
  it('reads no disk and loads no compiler: only the embedded catalog is parsed', () => {
    const { files, packages } = reachable(resolve(here, 'verify-catalog.ts'));
    expect(files.size).toBeGreaterThan(5);
    expect(
      [...packages].filter((p) => /^(node:)?(fs|fs\/promises|child_process)$/.test(p)),
    ).toEqual([]);
    expect(packages).not.toContain('typescript');
    expect([...files].some((f) => f.endsWith('crawl.ts') || f.endsWith('disk-files.ts'))).toBe(
      false,
    );
  });

  it('the check catches what it is meant to catch', () => {
    const { packages } = reachable(resolve(here, 'crawl.ts'));
    expect(packages).toContain('node:fs');
  });
});
