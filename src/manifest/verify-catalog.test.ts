import { describe, expect, it } from 'vitest';
import {
  catalogPackage,
  fixtureText,
  handlers,
  hooks,
  stubHook,
  trackerCatalog,
} from '../../test/support/catalog.ts';
import { testRuntime } from '../../test/support/tool.ts';
import { execute } from '../tool/executor.ts';
import { hasCode } from '../tool/errors.ts';
import type { Catalog } from './catalog.ts';
import { packageDigest, sha256Hex } from './digest.ts';
import type { Diagnostic, ManifestInvalidError } from './diagnostic.ts';
import { loadCatalog, verifyCatalog } from './verify-catalog.ts';

function manifest(id: string, tools: string[], extra = ''): string {
  return [
    'manifest_version = 1',
    '[package]',
    `id = "${id}"`,
    'version = "0.3.1"',
    'mesh_api = "^1"',
    'hook_protocol = 1',
    'description = "d"',
    extra,
    ...tools.flatMap((name) => [
      '[[tools]]',
      `name = "${name}"`,
      'description = "d"',
      'class = "query"',
      'replay = "replayable"',
      `handler = "${name}Handler"`,
      'parameters = { type = "object", properties = { q = { type = "string" } } }',
    ]),
  ].join('\n');
}

function refusals(catalog: Catalog): Diagnostic[] {
  const result = verifyCatalog(catalog);
  expect(result.ok).toBe(false);
  expect('registry' in result).toBe(false);
  return result.ok ? [] : [...result.diagnostics];
}

const summary = (list: readonly Diagnostic[]) =>
  list.map((d) => ({
    code: d.code,
    file: d.file,
    field: d.field,
    package: d.package,
    tool: d.tool,
    handler: d.handler,
  }));

describe('loadCatalog', () => {
  it('builds the registry from embedded manifests and bound handlers', async () => {
    const loaded = loadCatalog(trackerCatalog());
    expect(loaded.registry.names()).toEqual([
      'tracker_search_issues',
      'tracker_get_issue',
      'tracker_create_issue',
    ]);
    const create = loaded.registry.get('tracker_create_issue');
    const pkg = loaded.packages[0];
    expect(create?.origin).toEqual({
      source: 'first_party',
      packageId: 'example.tracker',
      version: '1.2.0',
      digest: pkg?.digest,
    });
    expect(create).toMatchObject({
      class: 'effect',
      replay: 'effectful',
      needs: ['secret:tracker_api_token'],
    });
    expect(create?.outputSchema).toMatchObject({ required: ['key'] });
    expect(pkg?.skill?.name).toBe('tracker');
    expect(pkg?.manifest.config.map((c) => c.key)).toEqual([
      'api_token',
      'default_project',
      'page_size',
    ]);
    expect(loaded.hooks.get('example.tracker')?.on_enable).toBe(stubHook);
    const result = await execute(
      loaded.registry,
      { id: 'c1', name: 'tracker_get_issue', arguments: '{"key":"MESH-1"}' },
      testRuntime(),
    );
    expect(result.kind).toBe('observation');
    const refused = await execute(
      loaded.registry,
      { id: 'c2', name: 'tracker_get_issue', arguments: '{"key":"MESH-1","x":1}' },
      testRuntime(),
    );
    expect(refused.kind).toBe('invalid_input');
  });

  it('loads an empty catalog', () => {
    const loaded = loadCatalog({ packages: [], handlers: [], hooks: [] });
    expect(loaded.registry.size).toBe(0);
    expect(loaded.packages).toEqual([]);
  });

  it('throws manifest_invalid carrying every diagnostic', () => {
    const catalog: Catalog = {
      packages: [catalogPackage('a', manifest('pkg.a', ['alpha']).replace('"query"', '"read"'))],
      handlers: handlers('pkg.a', 'alphaHandler', 'unused'),
      hooks: [],
    };
    let error: unknown;
    try {
      loadCatalog(catalog);
    } catch (caught) {
      error = caught;
    }
    expect(hasCode(error, 'manifest_invalid')).toBe(true);
    const invalid = error as ManifestInvalidError;
    expect(invalid.diagnostics.map((d) => d.code)).toEqual(['class_unknown']);
    expect(invalid.toJSON().data?.['diagnostics']).toEqual([{ ...invalid.diagnostics[0] }]);
    expect(invalid.message).toContain('tools/a/manifest.toml: tools[0].class: must be one of');
  });

  it('refuses a handler with no binding, naming the package, the tool and the handler', () => {
    const catalog: Catalog = {
      packages: [catalogPackage('a', manifest('pkg.a', ['alpha', 'beta']))],
      handlers: handlers('pkg.a', 'alphaHandler'),
      hooks: [],
    };
    expect(summary(refusals(catalog))).toEqual([
      {
        code: 'binding_missing',
        file: 'tools/a/manifest.toml',
        field: 'tools[1].handler',
        package: 'pkg.a',
        tool: 'beta',
        handler: 'betaHandler',
      },
    ]);
  });

  it('refuses a binding no manifest references', () => {
    const catalog: Catalog = {
      packages: [catalogPackage('a', manifest('pkg.a', ['alpha']))],
      handlers: handlers('pkg.a', 'alphaHandler', 'leftover'),
      hooks: [],
    };
    expect(summary(refusals(catalog))).toEqual([
      {
        code: 'binding_extra',
        file: 'tools/a/handlers.ts',
        field: 'leftover',
        package: 'pkg.a',
        tool: undefined,
        handler: 'leftover',
      },
    ]);
  });

  it('refuses bindings for a package id no manifest declares, and a binding listed twice', () => {
    const catalog: Catalog = {
      packages: [catalogPackage('a', manifest('pkg.a', ['alpha']))],
      handlers: [
        ...handlers('pkg.a', 'alphaHandler', 'alphaHandler'),
        ...handlers('pkg.gone', 'old'),
      ],
      hooks: [],
    };
    expect(refusals(catalog).map((d) => `${d.code} ${d.field} ${d.handler}`)).toEqual([
      'binding_duplicate handlers[1] alphaHandler',
      'binding_extra handlers old',
    ]);
  });

  it('refuses declared hooks without a bound function and bound hooks not declared', () => {
    const catalog: Catalog = {
      packages: [
        catalogPackage(
          'a',
          manifest('pkg.a', ['alpha'], '[hooks]\non_enable = "enable"\nhealth_check = "probe"'),
        ),
      ],
      handlers: handlers('pkg.a', 'alphaHandler'),
      hooks: hooks('pkg.a', 'enable', 'teardown'),
    };
    expect(summary(refusals(catalog))).toEqual([
      {
        code: 'hook_binding_missing',
        file: 'tools/a/manifest.toml',
        field: 'hooks.health_check',
        package: 'pkg.a',
        tool: undefined,
        handler: 'probe',
      },
      {
        code: 'hook_binding_extra',
        file: 'tools/a/hooks.ts',
        field: 'teardown',
        package: 'pkg.a',
        tool: undefined,
        handler: 'teardown',
      },
    ]);
  });

  it('refuses duplicate package ids and tool names across packages', () => {
    const catalog: Catalog = {
      packages: [
        catalogPackage('a', manifest('pkg.a', ['alpha', 'shared'])),
        catalogPackage('b', manifest('pkg.b', ['shared'])),
        catalogPackage('c', manifest('pkg.a', ['gamma'])),
      ],
      handlers: [
        ...handlers('pkg.a', 'alphaHandler', 'sharedHandler', 'gammaHandler'),
        ...handlers('pkg.b', 'sharedHandler'),
      ],
      hooks: [],
    };
    expect(summary(refusals(catalog))).toEqual([
      {
        code: 'tool_name_duplicate',
        file: 'tools/b/manifest.toml',
        field: 'tools[0].name',
        package: 'pkg.b',
        tool: 'shared',
        handler: 'sharedHandler',
      },
      {
        code: 'package_id_duplicate',
        file: 'tools/c/manifest.toml',
        field: 'package.id',
        package: 'pkg.a',
        tool: undefined,
        handler: undefined,
      },
    ]);
  });

  it('refuses a catalog whose digests do not match its embedded content', () => {
    const good = trackerCatalog();
    const [entry] = good.packages;
    if (!entry) throw new Error('fixture');
    const edited = { ...entry, manifest: entry.manifest.replace('1.2.0', '1.2.1') };
    expect(refusals({ ...good, packages: [edited] }).map((d) => d.code)).toEqual([
      'digest_mismatch',
    ]);
  });

  it('refuses a catalog whose file hashes do not give its digest: a changed handlers.ts changes the pin', () => {
    const good = trackerCatalog();
    const [entry] = good.packages;
    if (!entry) throw new Error('fixture');
    const withCode = { ...entry.files, 'handlers.ts': sha256Hex('export const a = 1;\n') };
    const built = { ...entry, files: withCode, digest: packageDigest(withCode) };
    const loaded = verifyCatalog({ ...good, packages: [built] });
    expect(loaded.ok && loaded.packages[0]?.digest).toBe(built.digest);
    expect(built.digest).not.toBe(entry.digest);
    // The code changed and the recorded digest did not: refused at start-up.
    const changed = {
      ...built,
      files: { ...withCode, 'handlers.ts': sha256Hex('export const a = 2;\n') },
    };
    expect(refusals({ ...good, packages: [changed] }).map((d) => d.code)).toEqual([
      'digest_mismatch',
    ]);
  });

  it('refuses an embedded schema file the manifest does not reference, and a referenced one that is missing', () => {
    const good = trackerCatalog();
    const [entry] = good.packages;
    if (!entry) throw new Error('fixture');
    const extra = catalogPackage(
      'tracker',
      entry.manifest,
      { ...entry.schemas, 'schemas/stray.json': '{}' },
      entry.skill,
    );
    expect(summary(refusals({ ...good, packages: [extra] }))).toEqual([
      {
        code: 'schema_unreferenced',
        file: 'tools/tracker/schemas/stray.json',
        field: '',
        package: 'example.tracker',
        tool: undefined,
        handler: undefined,
      },
    ]);
    const missing = catalogPackage(
      'tracker',
      entry.manifest,
      { 'schemas/get-issue.json': fixtureText('tracker/schemas/get-issue.json') },
      entry.skill,
    );
    expect(refusals({ ...good, packages: [missing] }).map((d) => `${d.code} ${d.field}`)).toEqual([
      'schema_missing tools[2].parameters',
    ]);
  });

  it('parses without executing any handler', () => {
    let calls = 0;
    const catalog = trackerCatalog();
    const counting = catalog.handlers.map((h) => ({
      ...h,
      fn: async () => {
        calls++;
        return { text: '' };
      },
    }));
    loadCatalog({ ...catalog, handlers: counting });
    expect(calls).toBe(0);
  });
});
