import { generateKeyPairSync } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURE_PACKAGES, temporaryDir } from '../../test/support/catalog.ts';
import { testRuntime } from '../../test/support/tool.ts';
import { execute } from '../tool/executor.ts';
import { packArchive } from './archive/archive-pack.ts';
import { verifyArchive } from './archive/archive-verify.ts';
import { keyId } from './archive/archive-format.ts';
import { buildCatalog } from './build-catalog.ts';
import type { Catalog } from './catalog.ts';
import { CATALOG_HEADER } from './catalog-writer.ts';
import { crawlPackages } from './crawl.ts';
import { loadCatalog } from './verify-catalog.ts';

/** The digest `mesh packages pack` gives a folder, as a verifier reads it back. */
async function packedDigest(dir: string): Promise<string> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const bytes = await packArchive(dir, privateKey);
  const trusted = { name: 'publisher', key: publicKey, id: keyId(publicKey) };
  return (await verifyArchive(bytes, [trusted])).digest;
}

// Inside the repository (and git-ignored) so the generated imports resolve when the test loads it.
const OUTPUT = new URL(`../../test-output/build-catalog-${process.pid}/`, import.meta.url).pathname;
mkdirSync(OUTPUT, { recursive: true });
afterAll(() => rmSync(OUTPUT, { recursive: true, force: true }));

function copyOfFixtures(): { tools: string; remove: () => void } {
  const { dir, remove } = temporaryDir('build');
  const tools = join(dir, 'tools');
  cpSync(FIXTURE_PACKAGES, tools, { recursive: true });
  return { tools, remove };
}

describe('buildCatalog', () => {
  it('writes a catalog that loads into the registry with the real handlers', async () => {
    const outFile = join(OUTPUT, 'fixtures.ts');
    const outcome = await buildCatalog({ toolsDir: FIXTURE_PACKAGES, outFile, check: false });
    expect(outcome).toMatchObject({ kind: 'written', packages: 1 });
    const text = readFileSync(outFile, 'utf8');
    expect(text.startsWith(CATALOG_HEADER)).toBe(true);
    expect(text).not.toMatch(/\d{4}-\d\d-\d\dT/);
    expect(text).toContain(
      'import * as handlers_0 from "../../test/fixtures/packages/tracker/handlers.ts";',
    );
    expect(text).toContain(
      '{ packageId: "example.tracker", name: "createIssue", fn: handlers_0.createIssue },',
    );
    const { catalog } = (await import(outFile)) as { catalog: Catalog };
    expect(catalog.packages[0]?.schemas).toHaveProperty(['schemas/get-issue.json']);
    expect(catalog.packages[0]?.skill).toContain('name: tracker');
    const loaded = loadCatalog(catalog);
    expect(loaded.registry.names()).toEqual([
      'tracker_search_issues',
      'tracker_get_issue',
      'tracker_create_issue',
    ]);
    const result = await execute(
      loaded.registry,
      { id: 'c', name: 'tracker_get_issue', arguments: '{"key":"MESH-7"}' },
      testRuntime(),
    );
    expect(result.observation.text).toBe('issue "MESH-7"');
    expect(loaded.hooks.get('example.tracker')?.on_secret_capture).toBeTypeOf('function');
  });

  it('is deterministic and writes only when the content changes', async () => {
    const outFile = join(OUTPUT, 'determinism.ts');
    const first = await buildCatalog({ toolsDir: FIXTURE_PACKAGES, outFile, check: false });
    const text = readFileSync(outFile, 'utf8');
    const second = await buildCatalog({ toolsDir: FIXTURE_PACKAGES, outFile, check: false });
    expect([first.kind, second.kind]).toEqual(['written', 'unchanged']);
    expect(readFileSync(outFile, 'utf8')).toBe(text);
    const check = await buildCatalog({ toolsDir: FIXTURE_PACKAGES, outFile, check: true });
    expect(check.kind).toBe('unchanged');
  });

  it('in check mode names a stale file and does not write it', async () => {
    const { tools, remove } = copyOfFixtures();
    try {
      const outFile = join(OUTPUT, 'stale.ts');
      await buildCatalog({ toolsDir: tools, outFile, check: false });
      const manifest = join(tools, 'tracker', 'manifest.toml');
      writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('1.2.0', '1.3.0'));
      const before = readFileSync(outFile, 'utf8');
      const outcome = await buildCatalog({
        toolsDir: tools,
        outFile,
        check: true,
        displayOut: 'src/generated/catalog.ts',
      });
      expect(outcome).toEqual({ kind: 'stale', file: 'src/generated/catalog.ts' });
      expect(readFileSync(outFile, 'utf8')).toBe(before);
      const missing = await buildCatalog({
        toolsDir: tools,
        outFile: join(OUTPUT, 'never-written.ts'),
        check: true,
      });
      expect(missing.kind).toBe('stale');
      expect(existsSync(join(OUTPUT, 'never-written.ts'))).toBe(false);
    } finally {
      remove();
    }
  });

  it('digests the whole folder: a changed handlers.ts changes the pin, and the archive of the folder has the same one', async () => {
    const { tools, remove } = copyOfFixtures();
    try {
      const digestOf = () => crawlPackages(tools).packages[0]?.package?.digest;
      const before = digestOf();
      expect(before).toBe(await packedDigest(join(tools, 'tracker')));
      const outFile = join(OUTPUT, 'code.ts');
      await buildCatalog({ toolsDir: tools, outFile, check: false });
      const handlers = join(tools, 'tracker', 'handlers.ts');
      writeFileSync(handlers, `${readFileSync(handlers, 'utf8')}\n// one more line\n`);
      const after = digestOf();
      expect(after).not.toBe(before);
      expect(after).toBe(await packedDigest(join(tools, 'tracker')));
      // A helper next to the handlers is code too.
      writeFileSync(join(tools, 'tracker', 'helper.ts'), 'export const x = 1;\n');
      expect(digestOf()).not.toBe(after);
      expect((await buildCatalog({ toolsDir: tools, outFile, check: true })).kind).toBe('stale');
    } finally {
      remove();
    }
  });

  it('takes the handler list from handlers.ts, and refuses to write when it does not match', async () => {
    const { tools, remove } = copyOfFixtures();
    try {
      const handlers = join(tools, 'tracker', 'handlers.ts');
      writeFileSync(
        handlers,
        `${readFileSync(handlers, 'utf8')}\nexport const archiveIssue = getIssue;\n`,
      );
      const outFile = join(OUTPUT, 'invalid.ts');
      const outcome = await buildCatalog({ toolsDir: tools, outFile, check: false });
      expect(outcome.kind).toBe('invalid');
      if (outcome.kind !== 'invalid') return;
      expect(outcome.diagnostics.map((d) => [d.code, d.file, d.field])).toEqual([
        ['binding_extra', 'tools/tracker/handlers.ts', 'archiveIssue'],
      ]);
      expect(existsSync(outFile)).toBe(false);
    } finally {
      remove();
    }
  });

  it('emits a valid empty catalog for an empty or missing tools directory', async () => {
    const { dir, remove } = temporaryDir('empty');
    try {
      for (const [name, toolsDir] of [
        ['empty.ts', dir],
        ['missing.ts', join(dir, 'nope')],
      ] as const) {
        const outFile = join(OUTPUT, name);
        expect((await buildCatalog({ toolsDir, outFile, check: false })).kind).toBe('written');
        const { catalog } = (await import(outFile)) as { catalog: Catalog };
        expect(catalog).toEqual({ packages: [], handlers: [], hooks: [] });
        expect(loadCatalog(catalog).registry.size).toBe(0);
      }
    } finally {
      remove();
    }
  });
});
