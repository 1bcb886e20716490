/**
 * bench:crawl — start-up verification of 500 synthetic packages × 5 tools, against bare TOML
 * parsing of the same files, measured in one run.
 *
 *  (a) parse + validate + verify: `verifyCatalog` on a synthetic catalog holding every manifest
 *      and schema text (as the generated catalog does) and a handler for every tool; this
 *      includes building the Registry, which compiles each distinct schema with ajv.
 *  (b) bare parsing: read each manifest.toml from disk and parse it with smol-toml, nothing else.
 *
 * Two schema varieties are measured: `distinct` (every package words its schemas for its own
 * vendor, so 2,500 distinct schema documents) and `shared` (all packages use the same five).
 * Each is run cold once (a fresh process compiles everything, as a real start-up does) and then
 * warm; the figures printed are the cold run and the median of the warm runs. BENCH_PACKAGES (500)
 * and BENCH_WARM_RUNS (9) size it.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import type {
  Catalog,
  CatalogPackage,
  HandlerBinding,
  HookBinding,
} from '../src/manifest/catalog.ts';
import { crawlPackages } from '../src/manifest/crawl.ts';
import { sha256Hex } from '../src/manifest/digest.ts';
import { verifyCatalog } from '../src/manifest/verify-catalog.ts';
import { prepareDecoder } from '../src/tool/decode-arguments.ts';
import type { JsonObject } from '../src/model/json.ts';
import { median } from './stats.ts';
import {
  syntheticHandlers,
  writeSyntheticPackages,
  type SchemaVariety,
} from './synthetic-packages.ts';

const PACKAGES = Number(process.env['BENCH_PACKAGES'] ?? '500');
const WARM_RUNS = Number(process.env['BENCH_WARM_RUNS'] ?? '9');
const TARGET_MS = 1500;
const TARGET_RATIO = 3;

function ms(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The catalog the generator would write for these folders (texts embedded, digests computed). */
function catalogFor(dir: string): { catalog: Catalog; schemaTexts: string[] } {
  const crawl = crawlPackages(dir);
  if (crawl.diagnostics.length > 0)
    throw new Error(`synthetic packages are invalid: ${crawl.diagnostics[0]?.message}`);
  const packages: CatalogPackage[] = [];
  const handlers: HandlerBinding[] = [];
  const hooks: HookBinding[] = [];
  const schemaTexts: string[] = [];
  for (const p of crawl.packages) {
    const manifest = p.manifestText ?? '';
    const id = p.package?.manifest.package.id ?? '';
    packages.push({
      folder: p.folder,
      manifest,
      manifestSha256: sha256Hex(manifest),
      digest: p.package?.digest ?? '',
      files: p.package?.files ?? {},
      schemas: p.schemaFiles,
    });
    for (const name of syntheticHandlers())
      handlers.push({ packageId: id, name, fn: async () => ({ text: 'ok' }) });
    for (const name of ['enable', 'health'])
      hooks.push({ packageId: id, name, fn: async () => ({ kind: 'success' }) });
    for (const tool of p.package?.manifest.tools ?? []) {
      schemaTexts.push(JSON.stringify(tool.parameters));
      if (tool.outputSchema) schemaTexts.push(JSON.stringify(tool.outputSchema));
    }
  }
  return { catalog: { packages, handlers, hooks }, schemaTexts };
}

function verifyOnce(catalog: Catalog): number {
  const start = process.hrtime.bigint();
  const result = verifyCatalog(catalog);
  const elapsed = ms(start);
  if (!result.ok) throw new Error(`verification failed: ${result.diagnostics[0]?.message}`);
  if (result.registry.size !== PACKAGES * 5) throw new Error(`expected ${PACKAGES * 5} tools`);
  return elapsed;
}

function bareParseOnce(dir: string, folders: readonly string[]): number {
  const start = process.hrtime.bigint();
  for (const folder of folders) parse(readFileSync(join(dir, folder, 'manifest.toml'), 'utf8'));
  return ms(start);
}

/**
 * Schema compilation alone, as verification does it (`prepareDecoder`: ajv plus the argument
 * shape) for every distinct schema, on fresh objects so nothing is cached.
 */
function compileOnce(schemaTexts: readonly string[]): number {
  const fresh = [...new Set(schemaTexts)].map((text) => JSON.parse(text) as JsonObject);
  const start = process.hrtime.bigint();
  for (const schema of fresh) prepareDecoder(schema, 'strict');
  return ms(start);
}

function scenario(variety: SchemaVariety): void {
  const dir = mkdtempSync(join(tmpdir(), `mesh-bench-crawl-${variety}-`));
  try {
    const folders = writeSyntheticPackages(dir, PACKAGES, variety);
    const { catalog, schemaTexts } = catalogFor(dir);
    const distinct = new Set(schemaTexts).size;
    const bytes = catalog.packages.reduce(
      (n, p) => n + p.manifest.length + Object.values(p.schemas).reduce((m, s) => m + s.length, 0),
      0,
    );
    const coldBare = bareParseOnce(dir, folders);
    const coldVerify = verifyOnce(catalog);
    const warmVerify: number[] = [];
    const warmBare: number[] = [];
    const warmCompile: number[] = [];
    for (let i = 0; i < WARM_RUNS; i++) {
      warmBare.push(bareParseOnce(dir, folders));
      warmVerify.push(verifyOnce(catalog));
      warmCompile.push(compileOnce(schemaTexts));
    }
    const verify = median(warmVerify);
    const bare = median(warmBare);
    const compile = median(warmCompile);
    console.log(
      `\n[${variety} schemas] ${PACKAGES} packages × 5 tools, ${(bytes / 1024).toFixed(0)} KiB of manifests and schema files, ${schemaTexts.length} schemas (${distinct} distinct)`,
    );
    console.log(
      `  (a) parse + validate + verify + registry: cold ${coldVerify.toFixed(0)} ms, warm median ${verify.toFixed(0)} ms`,
    );
    console.log(
      `  (b) bare read + smol-toml parse:          cold ${coldBare.toFixed(0)} ms, warm median ${bare.toFixed(0)} ms`,
    );
    console.log(
      `  ratio (a)/(b): cold ${(coldVerify / coldBare).toFixed(1)}x, warm ${(verify / bare).toFixed(1)}x (target <= ${TARGET_RATIO}x); total cold ${coldVerify.toFixed(0)} ms (target <= ${TARGET_MS} ms)`,
    );
    console.log(
      `  of which compiling the ${distinct} distinct schemas (ajv + argument shape) alone: warm median ${compile.toFixed(0)} ms; (a) without it: ~${Math.max(0, verify - compile).toFixed(0)} ms = ${(Math.max(0, verify - compile) / bare).toFixed(1)}x bare parsing`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `load average ${loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')} on ${availableParallelism()} CPUs`,
);
scenario('shared');
scenario('distinct');
