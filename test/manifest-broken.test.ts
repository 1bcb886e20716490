import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { crawlPackages } from '../src/manifest/crawl.ts';
import type { Diagnostic, DiagnosticCode } from '../src/manifest/diagnostic.ts';
import { exportsOf, type ExportDiscovery } from '../src/manifest/export-discovery.ts';
import { loadCatalog, verifyCatalog } from '../src/manifest/verify-catalog.ts';
import { hasCode } from '../src/tool/errors.ts';
import ts from 'typescript';
import { catalogFromCrawl, temporaryDir, toolsDirFor } from './support/catalog.ts';

const CASES = new URL('./fixtures/broken-manifests/', import.meta.url).pathname;

interface Expected {
  /** Every diagnostic the case yields, as `code field` (exactly these). */
  readonly diagnostics: readonly `${DiagnosticCode} ${string}`[];
  /** The refusal concerns files on disk only (a catalog embeds texts, not symlinks). */
  readonly diskOnly?: boolean;
  /** Prepares the temporary copy of the case (files a formatter or git would mangle). */
  readonly prepare?: (packageDir: string) => void;
}

/** One entry per folder of test/fixtures/broken-manifests. */
const EXPECTED: Record<string, Expected> = {
  'binding-extra': { diagnostics: ['binding_extra searchEverything'] },
  'binding-missing': { diagnostics: ['binding_missing tools[1].handler'] },
  'class-unknown': { diagnostics: ['class_unknown tools[0].class'] },
  'config-key-duplicate': { diagnostics: ['config_key_duplicate config[1].key'] },
  'config-key-invalid': { diagnostics: ['config_key_invalid config[0].key'] },
  'config-type-unknown': { diagnostics: ['config_type_unknown config[0].type'] },
  'default-type-mismatch': { diagnostics: ['default_type_mismatch config[0].default'] },
  'description-control-character': { diagnostics: ['text_control_character tools[0].description'] },
  'disposition-unknown': { diagnostics: ['disposition_unknown config[0].disposition'] },
  'duplicate-package-id': { diagnostics: ['package_id_duplicate package.id'] },
  'duplicate-tool-across-packages': { diagnostics: ['tool_name_duplicate tools[0].name'] },
  'effect-replayable': { diagnostics: ['replay_not_allowed tools[0].replay'] },
  'handler-invalid': { diagnostics: ['handler_invalid tools[0].handler'] },
  'handler-shared': { diagnostics: ['handler_duplicate tools[1].handler'] },
  'handlers-export-star': {
    diagnostics: ['binding_source_unsupported ', 'binding_missing tools[0].handler'],
    // The catalog of a crawl binds what export discovery found: nothing.
    diskOnly: true,
  },
  'hook-binding-extra': { diagnostics: ['hook_binding_extra health'] },
  'hook-binding-missing': { diagnostics: ['hook_binding_missing hooks.on_enable'] },
  'hook-handler-invalid': { diagnostics: ['handler_invalid hooks.on_enable'] },
  'hook-protocol-unsupported': { diagnostics: ['hook_protocol_unsupported package.hook_protocol'] },
  'inline-schema-date': {
    diagnostics: ['value_not_json tools[0].parameters.properties.since.default'],
  },
  'kind-on-non-secret': { diagnostics: ['secret_kind_forbidden config[0].kind'] },
  'malformed-toml': { diagnostics: ['toml_syntax '] },
  'manifest-version-missing': { diagnostics: ['field_missing manifest_version'] },
  'manifest-version-unknown': { diagnostics: ['manifest_version_unsupported manifest_version'] },
  'mesh-api-invalid': { diagnostics: ['mesh_api_invalid package.mesh_api'] },
  'mesh-api-unsatisfied': { diagnostics: ['mesh_api_unsatisfied package.mesh_api'] },
  'need-dangling': { diagnostics: ['need_dangling tools[0].needs[0]'] },
  'need-duplicate': { diagnostics: ['need_duplicate tools[0].needs[1]'] },
  'need-unknown': { diagnostics: ['need_unknown tools[0].needs[1]'] },
  'output-schema-invalid': { diagnostics: ['schema_invalid tools[0].output_schema'] },
  'package-description-missing': { diagnostics: ['field_missing package.description'] },
  'package-id-invalid': { diagnostics: ['package_id_invalid package.id'] },
  'parameters-invalid-schema': { diagnostics: ['schema_invalid tools[0].parameters'] },
  'parameters-missing': { diagnostics: ['field_missing tools[0].parameters'] },
  'parameters-not-object': { diagnostics: ['schema_invalid tools[0].parameters'] },
  'replay-internal-not-owned': { diagnostics: ['replay_not_allowed tools[0].replay'] },
  'replay-unknown': { diagnostics: ['replay_unknown tools[0].replay'] },
  'schema-missing': { diagnostics: ['schema_missing tools[0].parameters'] },
  'schema-not-json': {
    diagnostics: ['schema_not_json tools[0].parameters'],
    prepare: (dir) => {
      mkdirSync(join(dir, 'schemas'));
      writeFileSync(join(dir, 'schemas', 'params.json'), '{"type": "object",}\n');
    },
  },
  'schema-path-absolute': { diagnostics: ['schema_path_invalid tools[0].parameters'] },
  'schema-path-traversal': {
    diagnostics: ['schema_path_invalid tools[0].parameters'],
    // The file the reference points at exists, so only the path rule can refuse it.
    prepare: (dir) => {
      mkdirSync(join(dir, '..', 'shared'));
      writeFileSync(join(dir, '..', 'shared', 'params.json'), '{"type":"object"}');
    },
  },
  'schema-symlink': {
    diagnostics: ['schema_symlink tools[0].parameters'],
    diskOnly: true,
    prepare: (dir) => {
      mkdirSync(join(dir, 'schemas'));
      symlinkSync('../real-params.json', join(dir, 'schemas', 'params.json'));
    },
  },
  'secret-default': { diagnostics: ['secret_default_forbidden config[0].default'] },
  'secret-kind-missing': { diagnostics: ['secret_kind_missing config[0].kind'] },
  'secret-kind-provided-twice': {
    diagnostics: ['secret_kind_duplicate config[1].kind', 'need_ambiguous tools[0].needs[0]'],
  },
  'secret-not-string': { diagnostics: ['secret_type_not_string config[0].type'] },
  'skill-malformed': { diagnostics: ['skill_invalid front_matter'] },
  'skill-name-missing': { diagnostics: ['skill_invalid front_matter.name'] },
  'tool-name-duplicate': { diagnostics: ['tool_name_duplicate tools[1].name'] },
  'tool-name-invalid': { diagnostics: ['tool_name_invalid tools[0].name'] },
  'tools-missing': { diagnostics: ['tools_missing tools'] },
  'tools-not-array': { diagnostics: ['field_type tools'] },
  'unknown-config-field': { diagnostics: ['field_unknown config[0].label'] },
  'unknown-hook': { diagnostics: ['field_unknown hooks.on_install'] },
  'unknown-package-field': { diagnostics: ['field_unknown package.homepage'] },
  'unknown-tool-field': { diagnostics: ['field_unknown tools[0].timeout'] },
  'unknown-top-level-field': { diagnostics: ['field_unknown tool', 'tools_missing tools'] },
  'version-invalid': { diagnostics: ['version_invalid package.version'] },
};

const discover: ExportDiscovery = (text, file) => exportsOf(ts, text, file);
const asKeys = (list: readonly Diagnostic[]) => list.map((d) => `${d.code} ${d.field}`).sort();

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

/** Copies a case into a temporary tools/ directory, prepares it, and crawls it from disk. */
function crawlCase(name: string) {
  const { dir, remove } = temporaryDir('broken');
  cleanup = remove;
  const tools = toolsDirFor(join(CASES, name), dir);
  EXPECTED[name]?.prepare?.(join(tools, name));
  return crawlPackages(tools, { displayRoot: 'tools', discover });
}

describe('broken-manifest fixtures', () => {
  beforeAll(() => {
    const folders = readdirSync(CASES).sort();
    expect(folders).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [name, expected] of Object.entries(EXPECTED)) {
    it(`${name}: refused with its named diagnostic, and nothing is registered`, () => {
      const crawl = crawlCase(name);
      expect(asKeys(crawl.diagnostics)).toEqual([...expected.diagnostics].sort());
      for (const d of crawl.diagnostics) {
        expect(d.file).toMatch(/^tools\//);
        expect(d.package).toBeTruthy();
      }
      const catalog = catalogFromCrawl(crawl);
      const verification = verifyCatalog(catalog);
      expect(verification.ok).toBe(false);
      expect('registry' in verification).toBe(false);
      if (!verification.ok && !expected.diskOnly) {
        expect(asKeys(verification.diagnostics)).toEqual([...expected.diagnostics].sort());
      }
      expect(() => loadCatalog(catalog)).toThrow(
        expect.objectContaining({ code: 'manifest_invalid' }),
      );
    });
  }

  it('each case explains the rule it breaks in its first line', () => {
    for (const name of Object.keys(EXPECTED)) {
      const file = existsSync(join(CASES, name, 'manifest.toml'))
        ? join(CASES, name, 'manifest.toml')
        : join(CASES, name, 'b', 'manifest.toml');
      expect(readFileSync(file, 'utf8')).toMatch(/^# Refused/);
    }
  });
});

describe('refusals generated at run time', () => {
  function singlePackage(files: Record<string, string>) {
    const { dir, remove } = temporaryDir('generated');
    cleanup = remove;
    const root = join(dir, 'tools', 'big');
    mkdirSync(root, { recursive: true });
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return { tools: join(dir, 'tools'), root };
  }

  const manifest = readFileSync(join(CASES, 'schema-missing', 'manifest.toml'), 'utf8');

  it('refuses a 10 MiB manifest before parsing, on disk and embedded', () => {
    const huge = `# ${'x'.repeat(10 * 1024 * 1024)}\n${manifest}`;
    const { tools } = singlePackage({ 'manifest.toml': huge });
    const crawl = crawlPackages(tools, { displayRoot: 'tools', discover });
    expect(crawl.diagnostics.map((d) => [d.code, d.file])).toEqual([
      ['manifest_too_large', 'tools/big/manifest.toml'],
    ]);
    const embedded = verifyCatalog({
      packages: [
        { folder: 'big', manifest: huge, manifestSha256: '', digest: '', files: {}, schemas: {} },
      ],
      handlers: [],
      hooks: [],
    });
    expect(embedded.ok === false && embedded.diagnostics.map((d) => d.code)).toEqual([
      'manifest_too_large',
    ]);
  });

  it('refuses every control character in a description but tab, line feed and CRLF', () => {
    const withDescription = (escaped: string) =>
      readFileSync(join(CASES, 'description-control-character', 'manifest.toml'), 'utf8').replace(
        /^description = "Search[^\n]*$/m,
        `description = "Search.${escaped}more"`,
      );
    const refused = (escaped: string) => {
      const { tools } = singlePackage({ 'manifest.toml': withDescription(escaped) });
      return crawlPackages(tools, { displayRoot: 'tools' })
        .diagnostics.filter((d) => d.code === 'text_control_character')
        .map((d) => d.field);
    };
    for (const bad of ['\\u0000', '\\u0007', '\\r', '\\u007f', '\\u0085', '\\u001b[2J'])
      expect(refused(bad), bad).toEqual(['tools[0].description']);
    for (const fine of ['\\t', '\\n', '\\r\\n', ' é 🙂 ']) expect(refused(fine), fine).toEqual([]);
  });

  it("turns a schema nested too deeply to check into its package's diagnostic, and goes on", () => {
    const depth = 100_000;
    const deep = `{"type":"object","default":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const { tools } = singlePackage({ 'manifest.toml': manifest, 'schemas/params.json': deep });
    mkdirSync(join(tools, 'other'));
    writeFileSync(
      join(tools, 'other', 'manifest.toml'),
      readFileSync(join(CASES, 'class-unknown', 'manifest.toml'), 'utf8'),
    );
    const crawl = crawlPackages(tools, { displayRoot: 'tools', discover });
    const keys = crawl.diagnostics.map((d) => `${d.code} ${d.file}`);
    expect(keys).toContain('class_unknown tools/other/manifest.toml');
    expect(keys.filter((k) => k.includes('tools/big'))).toHaveLength(1);
    expect(crawl.diagnostics.find((d) => d.file.startsWith('tools/big'))?.message).toMatch(
      /nests too deeply/,
    );
  });

  it('refuses a schema file over the size cap, and one reached through a symlinked directory', () => {
    const big = JSON.stringify({ type: 'object', description: 'x'.repeat(300 * 1024) });
    const { tools, root } = singlePackage({ 'manifest.toml': manifest, 'real/params.json': big });
    symlinkSync('real', join(root, 'schemas'));
    const crawl = crawlPackages(tools, { displayRoot: 'tools', discover });
    expect(asKeys(crawl.diagnostics)).toEqual(['schema_symlink tools[0].parameters']);
    const sized = singlePackage({ 'manifest.toml': manifest, 'schemas/params.json': big });
    expect(
      asKeys(crawlPackages(sized.tools, { displayRoot: 'tools', discover }).diagnostics),
    ).toEqual(['schema_too_large tools[0].parameters']);
  });

  it('refuses a symlinked package folder and manifest', () => {
    const { tools, root } = singlePackage({ 'manifest.toml': manifest });
    symlinkSync(root, join(tools, 'alias'));
    mkdirSync(join(tools, 'linked'));
    symlinkSync(join(root, 'manifest.toml'), join(tools, 'linked', 'manifest.toml'));
    const crawl = crawlPackages(tools, { displayRoot: 'tools', discover });
    const keys = crawl.diagnostics.map((d) => `${d.code} ${d.file}`);
    expect(keys).toContain('package_symlink tools/alias');
    expect(keys).toContain('package_symlink tools/linked/manifest.toml');
  });

  it('refuses a manifest that is not UTF-8, and a package folder with an unusable name', () => {
    const { tools, root } = singlePackage({ 'manifest.toml': manifest });
    writeFileSync(
      join(root, 'manifest.toml'),
      Buffer.concat([Buffer.from(manifest), Buffer.from([0xff, 0xfe])]),
    );
    mkdirSync(join(tools, 'Bad Name'));
    writeFileSync(join(tools, 'Bad Name', 'manifest.toml'), manifest);
    const crawl = crawlPackages(tools, { displayRoot: 'tools', discover });
    expect(crawl.diagnostics.map((d) => `${d.code} ${d.file}`).sort()).toEqual([
      'file_encoding tools/big/manifest.toml',
      'folder_name_invalid tools/Bad Name',
    ]);
  });

  it('never echoes the secret default of the secret-default case', () => {
    const crawl = crawlCase('secret-default');
    expect(JSON.stringify(crawl.diagnostics)).not.toContain('sk-live-do-not-echo');
    try {
      loadCatalog(catalogFromCrawl(crawl));
      expect.unreachable();
    } catch (error) {
      expect(hasCode(error, 'manifest_invalid')).toBe(true);
      expect(JSON.stringify(error)).not.toContain('sk-live-do-not-echo');
      expect(String(error)).not.toContain('sk-live-do-not-echo');
    }
  });
});
