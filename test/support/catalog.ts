import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  Catalog,
  CatalogPackage,
  HandlerBinding,
  HookBinding,
} from '../../src/manifest/catalog.ts';
import type { CrawlResult } from '../../src/manifest/crawl.ts';
import { catalog } from '../../src/generated/catalog.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';
import { packageDigest, sha256Hex } from '../../src/manifest/digest.ts';
import type { PackageHook } from '../../src/tool/hook.ts';
import type { Definition, ToolHandler } from '../../src/tool/definition.ts';

/** Where the example package lives. */
export const FIXTURE_PACKAGES = new URL('../fixtures/packages/', import.meta.url).pathname;

/** A handler stub that records nothing and answers `ok`. */
export const stubHandler: ToolHandler = async () => ({ text: 'ok' });
/** A hook stub that succeeds. */
export const stubHook: PackageHook = async () => ({ kind: 'success' });

/** Reads a fixture file of the example package. */
export function fixtureText(relative: string): string {
  return readFileSync(join(FIXTURE_PACKAGES, relative), 'utf8');
}

/** A catalog entry whose digests match its content, as the generator would write it. */
export function catalogPackage(
  folder: string,
  manifest: string,
  schemas: Record<string, string> = {},
  skill?: string,
): CatalogPackage {
  const files: Record<string, string> = { 'manifest.toml': sha256Hex(manifest) };
  for (const [path, text] of Object.entries(schemas)) files[path] = sha256Hex(text);
  if (skill !== undefined) files['SKILL.md'] = sha256Hex(skill);
  return {
    folder,
    manifest,
    manifestSha256: sha256Hex(manifest),
    digest: packageDigest(files),
    files,
    schemas,
    ...(skill === undefined ? {} : { skill }),
  };
}

/** Handler bindings with stub functions. */
export function handlers(packageId: string, ...names: string[]): HandlerBinding[] {
  return names.map((name) => ({ packageId, name, fn: stubHandler }));
}

/** Hook bindings with stub functions. */
export function hooks(packageId: string, ...names: string[]): HookBinding[] {
  return names.map((name) => ({ packageId, name, fn: stubHook }));
}

/** The example tracker package as a generated catalog would hold it. */
export function trackerCatalog(): Catalog {
  return {
    packages: [
      catalogPackage(
        'tracker',
        fixtureText('tracker/manifest.toml'),
        {
          'schemas/create-issue.json': fixtureText('tracker/schemas/create-issue.json'),
          'schemas/get-issue.json': fixtureText('tracker/schemas/get-issue.json'),
        },
        fixtureText('tracker/SKILL.md'),
      ),
    ],
    handlers: handlers('example.tracker', 'createIssue', 'getIssue', 'searchIssues'),
    hooks: hooks('example.tracker', 'checkToken', 'ping', 'registerWebhook', 'removeWebhook'),
  };
}

function firstMatch(text: string, pattern: RegExp): string | undefined {
  return pattern.exec(text)?.[1];
}

/**
 * A synthetic catalog built from what a crawl read, whether or not it validated: texts as read,
 * bindings from the discovered exports, or (when a package has no handlers.ts) stubs for every
 * handler its manifest names, so a case is refused for its own reason and not for a missing
 * binding. Package ids are read with a regex because the manifest may not parse.
 */
export function catalogFromCrawl(crawl: CrawlResult): Catalog {
  const packages: CatalogPackage[] = [];
  const handlerList: HandlerBinding[] = [];
  const hookList: HookBinding[] = [];
  for (const p of crawl.packages) {
    if (p.manifestText === undefined) continue;
    const text = p.manifestText;
    packages.push(catalogPackage(p.folder, text, { ...p.schemaFiles }, p.skillText));
    const id =
      p.package?.manifest.package.id ?? firstMatch(text, /^id\s*=\s*"([^"\n]*)"/m) ?? p.folder;
    const handlerNames =
      p.handlerExports ?? [...text.matchAll(/^handler\s*=\s*"([^"\n]*)"/gm)].map((m) => m[1] ?? '');
    // Hooks are not stubbed: a package with [hooks] and no hooks.ts is a case of its own.
    const hookNames = p.hookExports ?? [];
    handlerList.push(...handlers(id, ...new Set(handlerNames)));
    hookList.push(...hooks(id, ...new Set(hookNames)));
  }
  return { packages, handlers: handlerList, hooks: hookList };
}

/** A temporary directory removed by the returned function. */
export function temporaryDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `mesh-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Copies a broken-manifest case into `<dir>/tools`: a case folder holding a manifest.toml becomes
 * one package; any other case folder is a whole tools directory of packages.
 */
export function toolsDirFor(caseDir: string, dir: string): string {
  const tools = join(dir, 'tools');
  const name = caseDir.split('/').filter(Boolean).pop() ?? 'case';
  if (existsSync(join(caseDir, 'manifest.toml')))
    cpSync(caseDir, join(tools, name), { recursive: true });
  else cpSync(caseDir, tools, { recursive: true });
  return tools;
}

/** One of the agent's own verbs as the compiled-in catalog declares it (tools/agent/). */
export function declaredVerb(name: string): Definition {
  const verb = loadCatalog(catalog).registry.get(name);
  if (!verb) throw new Error(`the catalog declares no ${name}`);
  return verb;
}
