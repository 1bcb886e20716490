import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/*
 * ARCHITECTURE.md's "Layers": each folder of src/ may import only the folders listed for it, so
 * dependencies point downward toward tool/ and model/. Folders that do not exist yet have their
 * entries so that the rule is there when they arrive.
 */
const ALLOWED_FOLDERS: Record<string, readonly string[]> = {
  model: [],
  tool: ['model'],
  providers: ['model', 'tool'],
  manifest: ['model', 'tool'],
  policy: ['model', 'tool', 'manifest'],
  secrets: ['model', 'tool', 'manifest'],
  run: ['model', 'tool', 'policy'],
  lifecycle: ['model', 'tool', 'manifest', 'policy', 'secrets', 'run'],
  turn: ['model', 'tool', 'manifest', 'policy', 'run'],
  // The one way out for the control plane's own HTTP: address checked on every hop, DNS pinned.
  egress: ['model', 'tool'],
  mcp: ['model', 'tool', 'policy', 'egress'],
  // Query providers: retries use the one policy and backoff in tool/ (retry-policy.ts).
  web: ['model', 'tool', 'egress'],
  // A workspace's connections pass the same proxy and address policy as a browser's.
  exec: ['model', 'tool', 'egress'],
  // A development browser's requests are held to the same address classes as our own fetches.
  browser: ['model', 'tool', 'egress'],
  outbound: ['model', 'tool', 'run'],
  // The edge: implements the contracts of the layers below it.
  store: [
    'model',
    'tool',
    'manifest',
    'policy',
    'secrets',
    'run',
    'lifecycle',
    'mcp',
    'web',
    'outbound',
  ],
  generated: ['tool', 'manifest', 'model'],
  // The composition root: everything but the faces.
  app: [
    'model',
    'tool',
    'providers',
    'manifest',
    'policy',
    'secrets',
    'run',
    'lifecycle',
    'turn',
    'egress',
    'mcp',
    'web',
    'exec',
    'browser',
    'outbound',
    'store',
    'generated',
  ],
  // The faces: app and the pure contract types, never the store.
  server: ['app', 'model', 'tool'],
  // `mesh serve` starts the HTTP face: the one face the CLI may reach.
  cli: ['app', 'model', 'tool', 'server'],
};

/** Folders outside src/ that a src/ folder may reach: the generated catalog loads tools/. */
const ALLOWED_OUTSIDE: Record<string, readonly string[]> = {
  generated: ['tools'],
  app: ['tools'],
};

/** Folders that must stay pure: no I/O built-ins, only the packages listed. */
const PURE: Record<string, ReadonlySet<string>> = {
  model: new Set(),
  // The OpenTelemetry API is a facade without I/O: spans are no-ops until the composition root
  // registers a provider (src/app/telemetry.ts), the only place the SDK is imported.
  tool: new Set(['ajv', 'ajv-formats', 're2js', '@opentelemetry/api']),
  policy: new Set(),
};
/** Node built-ins that do no I/O. */
const PURE_BUILTINS = new Set(['node:crypto']);

/** Packages only one place may import (a driver, a process spawner, a browser). */
const OWNED_PACKAGES: readonly { pattern: RegExp; owner: string | readonly string[] }[] = [
  { pattern: /^pg$|^pg\//, owner: 'src/store/' },
  { pattern: /^@electric-sql\/pglite/, owner: 'src/store/' },
  // The process spawners: a sandbox's command, a development browser.
  { pattern: /^(node:)?child_process$/, owner: ['src/exec/backends/', 'src/browser/backends/'] },
  { pattern: /^playwright-core/, owner: 'src/browser/backends/' },
  // Zip reading and writing: only the package archive path, which never loads what it reads.
  { pattern: /^yau?zl$/, owner: 'src/manifest/archive/' },
  { pattern: /^e2b$|^e2b\//, owner: 'src/exec/backends/' },
  { pattern: /^exa-js$|^exa-js\//, owner: 'src/web/adapters/' },
  // The OpenTelemetry SDK is set up in one module, and imported only when tracing is configured.
  { pattern: /^@opentelemetry\/(?!api$)/, owner: 'src/app/telemetry.ts' },
  // The metrics registry: one module knows prom-client; the layers below report through hooks.
  { pattern: /^prom-client/, owner: 'src/app/metrics.ts' },
];

function sources(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

function isBuiltin(specifier: string): boolean {
  const bare = specifier.replace(/^node:/, '');
  return builtinModules.includes(bare) || builtinModules.includes(bare.split('/')[0] ?? '');
}

function packageOf(specifier: string): string {
  return specifier.startsWith('@')
    ? specifier.split('/').slice(0, 2).join('/')
    : (specifier.split('/')[0] ?? '');
}

/** Why `file` (in src/`folder`) may not import `specifier`, or undefined when it may. */
function violation(file: string, specifier: string, folder: string): string | undefined {
  const where = relative(root, file).split(sep).join('/');
  for (const { pattern, owner } of OWNED_PACKAGES) {
    const owners = typeof owner === 'string' ? [owner] : owner;
    if (pattern.test(specifier) && !owners.some((o) => where.startsWith(o)))
      return `${specifier} is imported only under ${owners.join(' or ')}`;
  }
  if (specifier.startsWith('.')) {
    const target = relative(root, resolve(dirname(file), specifier)).split(sep);
    if (target[0] !== 'src') {
      return ALLOWED_OUTSIDE[folder]?.includes(target[0] ?? '')
        ? undefined
        : `${specifier} leaves src/`;
    }
    const top = target[1] ?? '';
    if (top === folder) return undefined;
    return ALLOWED_FOLDERS[folder]?.includes(top)
      ? undefined
      : `${specifier} reaches into src/${top}`;
  }
  const pure = PURE[folder];
  if (!pure) return undefined;
  if (isBuiltin(specifier)) {
    return PURE_BUILTINS.has(`node:${specifier.replace(/^node:/, '')}`)
      ? undefined
      : `${specifier} is an I/O-capable built-in`;
  }
  return pure.has(packageOf(specifier))
    ? undefined
    : `${specifier} is not an allowed dependency of src/${folder}`;
}

/**
 * The npm packages a tools/ package may import: its own vendor's SDK, named per package folder.
 * Everything else of the world (the network, files, processes) still reaches a package only
 * through ctx; node built-ins stay forbidden.
 */
const PACKAGE_DEPENDENCIES: Record<string, ReadonlySet<string>> = {
  datadog: new Set(['@datadog/datadog-api-client']),
  github: new Set(['@octokit/rest', '@octokit/auth-app']),
  linear: new Set(['@linear/sdk']),
  slack: new Set(['@slack/web-api']),
};

/**
 * Why a file of a tools/ package may not import `specifier`: only the contract, itself and the
 * vendor SDK its allow-list names.
 */
function toolViolation(file: string, specifier: string): string | undefined {
  const where = relative(root, file).split(sep);
  if (specifier.startsWith('.')) {
    const target = relative(root, resolve(dirname(file), specifier)).split(sep);
    if (target[0] === 'tools' && target[1] === where[1]) return undefined;
    if (target[0] === 'src' && (target[1] === 'tool' || target[1] === 'model')) return undefined;
    return `${specifier}: a package reaches only src/tool, src/model and its own folder`;
  }
  if (isBuiltin(specifier)) {
    return PURE_BUILTINS.has(`node:${specifier.replace(/^node:/, '')}`)
      ? undefined
      : `${specifier}: a package reaches the world only through ctx`;
  }
  return PACKAGE_DEPENDENCIES[where[1] ?? '']?.has(packageOf(specifier))
    ? undefined
    : `${specifier}: a package imports only the vendor SDK its allow-list names`;
}

function problemsOf(
  files: readonly string[],
  check: (file: string, s: string) => string | undefined,
) {
  return files.flatMap((file) =>
    importsOf(file)
      .map((s) => check(file, s))
      .filter((v): v is string => v !== undefined)
      .map((v) => `${relative(root, file)}: ${v}`),
  );
}

/**
 * Uses of the global fetch in a file: a bare `fetch(…)` call where the file declares no `fetch`
 * of its own (a parameter, a variable), and `globalThis.fetch` (or `global.`/`window.`).
 */
function globalFetches(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  let declared = false;
  const uses: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isParameter(node) || ts.isVariableDeclaration(node) || ts.isBindingElement(node)) &&
      ts.isIdentifier(node.name) &&
      node.name.text === 'fetch'
    )
      declared = true;
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'fetch'
    )
      uses.push(`fetch( at line ${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'fetch' &&
      ts.isIdentifier(node.expression) &&
      ['globalThis', 'global', 'window'].includes(node.expression.text)
    )
      uses.push(
        `${node.expression.text}.fetch at line ${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`,
      );
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses
    .filter((u) => !declared || !u.startsWith('fetch('))
    .map((u) => `${relative(root, file)}: ${u}`);
}

const srcFolders = readdirSync(join(root, 'src'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

describe('the layers', () => {
  it('every folder of src/ has an allow-list', () => {
    expect(srcFolders.filter((f) => !(f in ALLOWED_FOLDERS))).toEqual([]);
  });

  for (const folder of srcFolders) {
    it(`src/${folder} imports only the folders below it`, () => {
      const files = sources(join(root, 'src', folder));
      expect(files.length).toBeGreaterThan(0);
      expect(problemsOf(files, (file, s) => violation(file, s, folder))).toEqual([]);
    });
  }

  it('tools/ packages reach only the contract, their own folder and ctx', () => {
    const files = sources(join(root, 'tools'));
    expect(files.length).toBeGreaterThan(0);
    expect(problemsOf(files, toolViolation)).toEqual([]);
  });

  it('tools/ and src/web send HTTP only through the guarded fetch they are handed, never the global one', () => {
    const files = [...sources(join(root, 'tools')), ...sources(join(root, 'src', 'web'))];
    expect(files.flatMap(globalFetches)).toEqual([]);
    // The check sees both spellings, and leaves a fetch the file was handed alone.
    const dir = mkdtempSync(join(tmpdir(), 'mesh-purity-'));
    try {
      const global = join(dir, 'global.ts');
      writeFileSync(global, 'await fetch("https://x");\nconst f = globalThis.fetch;\n');
      expect(globalFetches(global).map((u) => u.split(': ')[1])).toEqual([
        'fetch( at line 1',
        'globalThis.fetch at line 2',
      ]);
      const handed = join(dir, 'handed.ts');
      writeFileSync(
        handed,
        'export const go = (fetch: typeof globalThis.fetch) => fetch("https://x");\n',
      );
      expect(globalFetches(handed)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the checker catches what it is meant to catch', () => {
    const tool = join(root, 'src/tool/x.ts');
    expect(violation(tool, 'node:fs', 'tool')).toBeDefined();
    expect(violation(tool, 'fs/promises', 'tool')).toBeDefined();
    expect(violation(tool, 'node:child_process', 'tool')).toBeDefined();
    expect(violation(tool, 'pg', 'tool')).toBeDefined();
    expect(violation(tool, '@electric-sql/pglite', 'tool')).toBeDefined();
    expect(violation(tool, '../store/db.ts', 'tool')).toBeDefined();
    expect(violation(tool, '../model/wire.ts', 'tool')).toBeUndefined();
    expect(violation(join(root, 'src/model/x.ts'), '../tool/registry.ts', 'model')).toBeDefined();
    expect(violation(join(root, 'src/model/x.ts'), 'ajv', 'model')).toBeDefined();
    const run = join(root, 'src/run/x.ts');
    expect(violation(run, '../store/runs.ts', 'run')).toBeDefined();
    expect(violation(run, '../turn/engine.ts', 'run')).toBeDefined();
    expect(violation(run, './records.ts', 'run')).toBeUndefined();
    const server = join(root, 'src/server/ui/x.ts');
    expect(violation(server, '../../store/db.ts', 'server')).toBeDefined();
    expect(violation(server, '../../app/records.ts', 'server')).toBeUndefined();
    expect(violation(server, '../http.ts', 'server')).toBeUndefined();
    expect(violation(join(root, 'src/app/x.ts'), 'pg', 'app')).toBeDefined();
    expect(violation(tool, '@opentelemetry/api', 'tool')).toBeUndefined();
    expect(violation(tool, '@opentelemetry/sdk-trace-base', 'tool')).toBeDefined();
    const telemetry = join(root, 'src/app/telemetry.ts');
    expect(violation(telemetry, '@opentelemetry/sdk-trace-base', 'app')).toBeUndefined();
    expect(violation(join(root, 'src/store/x.ts'), 'pg', 'store')).toBeUndefined();
    expect(violation(join(root, 'src/store/x.ts'), '../app/mesh.ts', 'store')).toBeDefined();
    const handler = join(root, 'tools/memory/handlers.ts');
    expect(toolViolation(handler, '../../src/store/db.ts')).toBeDefined();
    expect(toolViolation(handler, 'node:fs')).toBeDefined();
    expect(toolViolation(handler, './memory-store.ts')).toBeUndefined();
    expect(toolViolation(handler, '../../src/tool/context.ts')).toBeUndefined();
    expect(toolViolation(handler, '@octokit/rest')).toBeDefined();
    const github = join(root, 'tools/github/handlers.ts');
    expect(toolViolation(github, '@octokit/rest')).toBeUndefined();
    expect(toolViolation(github, '@octokit/auth-app')).toBeUndefined();
    expect(toolViolation(github, '@octokit/request')).toBeDefined();
    expect(toolViolation(github, 'node:http')).toBeDefined();
    expect(toolViolation(github, 'node:child_process')).toBeDefined();
  });
});

describe('docs/architecture.md', () => {
  it('states the import rules this test enforces, folder by folder', () => {
    const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z]+)` \| (.+) \|$/gm)].map((m) => [
      m[1] ?? '',
      (m[2] ?? '')
        .split(',')
        .map((s) => s.trim().replaceAll('`', ''))
        .filter((s) => s !== '' && s !== '—')
        .sort(),
    ]);
    const enforced = Object.entries(ALLOWED_FOLDERS).map(([folder, allowed]) => [
      folder,
      [...allowed].sort(),
    ]);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(enforced));
  });
});
