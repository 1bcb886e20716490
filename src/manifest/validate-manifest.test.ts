import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixtureText } from '../../test/support/catalog.ts';
import type { Diagnostic } from './diagnostic.ts';
import { embeddedFiles } from './package-files.ts';
import { readPackage, type ReadOptions } from './read-package.ts';
import { SchemaPool } from './schema-pool.ts';

const HEAD = `manifest_version = 1

[package]
id = "test.pkg"
version = "1.0.0"
mesh_api = "^1.0"
hook_protocol = 1
description = "A test package."
`;

const TOOL = `
[[tools]]
name = "pkg_search"
description = "Search."
class = "query"
replay = "replayable"
handler = "search"
parameters = { type = "object", properties = { q = { type = "string" } } }
`;

function read(text: string, files: Record<string, string> = {}, options: ReadOptions = {}) {
  return readPackage(
    { folder: 'pkg', displayRoot: 'tools/pkg', manifestText: text, files: embeddedFiles(files) },
    options,
  );
}

function refusals(
  text: string,
  files: Record<string, string> = {},
  options: ReadOptions = {},
): Diagnostic[] {
  const result = read(text, files, options);
  if (result.ok) throw new Error('expected the manifest to be refused');
  return [...result.diagnostics];
}

const codes = (list: readonly Diagnostic[]) => list.map((d) => `${d.code} ${d.field}`);

function tracker() {
  const result = read(fixtureText('tracker/manifest.toml'), {
    'schemas/get-issue.json': fixtureText('tracker/schemas/get-issue.json'),
    'schemas/create-issue.json': fixtureText('tracker/schemas/create-issue.json'),
  });
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.package;
}

describe('readPackage on a valid manifest', () => {
  it('reads identity, config, tools and hooks in the spec’s vocabulary', () => {
    const { manifest } = tracker();
    expect(manifest.manifestVersion).toBe(1);
    expect(manifest.package).toEqual({
      id: 'example.tracker',
      version: '1.2.0',
      meshApi: '^1.0',
      hookProtocol: 1,
      description: "Reads and files issues in the example tracker as the agent's own account.",
      inFlight: 'drain',
    });
    expect(manifest.config.map((c) => [c.key, c.disposition, c.type])).toEqual([
      ['api_token', 'secret', 'string'],
      ['default_project', 'public', 'string'],
      ['page_size', 'config', 'integer'],
    ]);
    const secret = manifest.config[0];
    expect(secret?.disposition === 'secret' && secret.kind).toBe('tracker_api_token');
    expect(manifest.config[2]).toMatchObject({ default: 20 });
    expect(manifest.tools.map((t) => [t.name, t.class, t.replay, t.handler])).toEqual([
      ['tracker_search_issues', 'query', 'replayable', 'searchIssues'],
      ['tracker_get_issue', 'query', 'replayable', 'getIssue'],
      ['tracker_create_issue', 'effect', 'effectful', 'createIssue'],
    ]);
    expect(manifest.tools[0]?.parametersFrom).toEqual({ kind: 'inline' });
    expect(manifest.tools[1]?.parametersFrom).toEqual({
      kind: 'file',
      path: 'schemas/get-issue.json',
    });
    expect(manifest.tools[1]?.parameters).toMatchObject({ required: ['key'] });
    expect(manifest.tools[2]?.outputSchema).toMatchObject({ required: ['key'] });
    expect(manifest.hooks).toEqual({
      on_enable: 'registerWebhook',
      on_disable: 'removeWebhook',
      on_secret_capture: 'checkToken',
      health_check: 'ping',
    });
  });

  it('is deeply frozen', () => {
    const pkg = tracker();
    const tool = pkg.manifest.tools[0];
    expect(Object.isFrozen(pkg)).toBe(true);
    expect(Object.isFrozen(pkg.manifest.config[1])).toBe(true);
    expect(Object.isFrozen(tool?.needs)).toBe(true);
    expect(
      Object.isFrozen((tool?.parameters['properties'] as Record<string, unknown>)['query']),
    ).toBe(true);
    expect(() => {
      (pkg.manifest.package as { id: string }).id = 'other';
    }).toThrow(TypeError);
  });

  it('digests the package content, not only manifest.toml', () => {
    const a = tracker();
    const b = read(fixtureText('tracker/manifest.toml'), {
      'schemas/get-issue.json': fixtureText('tracker/schemas/get-issue.json').replace(
        'MESH-12',
        'MESH-13',
      ),
      'schemas/create-issue.json': fixtureText('tracker/schemas/create-issue.json'),
    });
    expect(b.ok && b.package.manifestSha256).toBe(a.manifestSha256);
    expect(b.ok && b.package.digest).not.toBe(a.digest);
    expect(a.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('shares one frozen schema object between tools with identical schemas', () => {
    const pool = new SchemaPool();
    const text = HEAD + TOOL + TOOL.replace('pkg_search', 'pkg_find').replace('"search"', '"find"');
    const result = read(text, {}, { pool });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [first, second] = result.package.manifest.tools;
    expect(first?.parameters).toBe(second?.parameters);
    expect(pool.size).toBe(1);
  });

  it('allows internal replay for a Mesh-owned package only', () => {
    const internal = TOOL.replace('"replayable"', '"internal"');
    expect(codes(refusals(HEAD + internal))).toEqual(['replay_not_allowed tools[0].replay']);
    expect(read(HEAD.replace('test.pkg', 'mesh.memory') + internal).ok).toBe(true);
    expect(read(HEAD + internal, {}, { meshOwnedPackages: new Set(['test.pkg']) }).ok).toBe(true);
  });

  it('checks mesh_api against the running Mesh API version', () => {
    const text = HEAD.replace('"^1.0"', '">=1.2.0 <2"') + TOOL;
    expect(codes(refusals(text))).toEqual(['mesh_api_unsatisfied package.mesh_api']);
    expect(read(text, {}, { meshApiVersion: '1.4.1' }).ok).toBe(true);
  });
});

describe('readPackage refusals', () => {
  it('collects every problem of a manifest in one pass', () => {
    const text =
      HEAD.replace('"1.0.0"', '"one"').replace('hook_protocol = 1', 'hook_protocol = "1"') +
      TOOL.replace('"query"', '"read"').replace('"search"', '"search me"') +
      '\n[[config]]\nkey = "k"\ndisposition = "hidden"\ntype = "string"\ndescription = "d"\n';
    expect(codes(refusals(text)).sort()).toEqual([
      'class_unknown tools[0].class',
      'disposition_unknown config[0].disposition',
      'field_type package.hook_protocol',
      'handler_invalid tools[0].handler',
      'version_invalid package.version',
    ]);
  });

  it('stops at a manifest_version it does not understand instead of guessing', () => {
    const list = refusals(
      HEAD.replace('manifest_version = 1', 'manifest_version = 2') + '\n[future]\nx = 1\n' + TOOL,
    );
    expect(codes(list)).toEqual(['manifest_version_unsupported manifest_version']);
    expect(
      codes(refusals(HEAD.replace('manifest_version = 1', 'manifest_version = "1"') + TOOL)),
    ).toEqual(['manifest_version_unsupported manifest_version']);
  });

  it('refuses unknown fields at every level, naming the dotted path', () => {
    const text =
      HEAD.replace('[package]', 'colour = "blue"\n\n[package]') +
      TOOL.replace('handler = "search"', 'handler = "search"\nretries = 3') +
      '\n[hooks]\non_enable = "enable"\non_upgrade = "upgrade"\n';
    expect(codes(refusals(text)).sort()).toEqual([
      'field_unknown colour',
      'field_unknown hooks.on_upgrade',
      'field_unknown tools[0].retries',
    ]);
  });

  it('reports a TOML syntax error with its line and column, without echoing the line', () => {
    const list = refusals(HEAD + '\ntoken = "sk-live-abcdef\n');
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      code: 'toml_syntax',
      file: 'tools/pkg/manifest.toml',
      line: 10,
    });
    expect(JSON.stringify(list)).not.toContain('sk-live');
  });

  it('refuses an oversized manifest before parsing it', () => {
    const list = refusals(`${'x'.repeat(1024 * 1024)} = = broken`);
    expect(codes(list)).toEqual(['manifest_too_large ']);
  });

  it('never echoes a value from the manifest, only field names', () => {
    const secret = 'sk-live-0123456789abcdef';
    const text =
      HEAD +
      `\n[[config]]\nkey = "api_key"\ndisposition = "secret"\ntype = "string"\nkind = "k"\ndefault = "${secret}"\ndescription = "d"\n` +
      `\n[[config]]\nkey = "region"\ndisposition = "config"\ntype = "integer"\ndefault = "${secret}"\ndescription = "d"\n` +
      TOOL.replace('"query"', `"${secret}"`);
    const list = refusals(text);
    expect(codes(list).sort()).toEqual([
      'class_unknown tools[0].class',
      'default_type_mismatch config[1].default',
      'secret_default_forbidden config[0].default',
    ]);
    expect(JSON.stringify(list)).not.toContain(secret);
  });

  it('type-checks config defaults against the declared type', () => {
    const field = (type: string, value: string) =>
      `\n[[config]]\nkey = "f"\ndisposition = "public"\ntype = "${type}"\ndefault = ${value}\ndescription = "d"\n`;
    expect(read(HEAD + field('number', '3') + TOOL).ok).toBe(true);
    expect(read(HEAD + field('number', '2.5') + TOOL).ok).toBe(true);
    expect(read(HEAD + field('boolean', 'false') + TOOL).ok).toBe(true);
    expect(codes(refusals(HEAD + field('integer', '1.5') + TOOL))).toEqual([
      'default_type_mismatch config[0].default',
    ]);
    expect(codes(refusals(HEAD + field('boolean', '"true"') + TOOL))).toEqual([
      'default_type_mismatch config[0].default',
    ]);
    expect(codes(refusals(HEAD + field('number', 'inf') + TOOL))).toEqual([
      'default_type_mismatch config[0].default',
    ]);
  });

  it('maps secret needs to exactly one providing secret field', () => {
    const secret = (key: string, kind: string) =>
      `\n[[config]]\nkey = "${key}"\ndisposition = "secret"\ntype = "string"\nkind = "${kind}"\ndescription = "d"\n`;
    const needs = (list: string) =>
      TOOL.replace('handler = "search"', `handler = "search"\nneeds = [${list}]`);
    expect(
      read(HEAD + secret('token', 'svc_token') + needs('"secret:svc_token", "workspace"')).ok,
    ).toBe(true);
    expect(codes(refusals(HEAD + secret('token', 'svc_token') + needs('"secret:other"')))).toEqual([
      'need_dangling tools[0].needs[0]',
    ]);
    expect(
      codes(
        refusals(
          HEAD + secret('a', 'svc_token') + secret('b', 'svc_token') + needs('"secret:svc_token"'),
        ),
      ),
    ).toEqual(['secret_kind_duplicate config[1].kind', 'need_ambiguous tools[0].needs[0]']);
    // A provided kind no tool needs is fine: a hook may be the one that uses it.
    expect(read(HEAD + secret('token', 'svc_token') + TOOL).ok).toBe(true);
  });

  it('refuses empty required strings and a malformed secret kind', () => {
    const text =
      HEAD.replace('description = "A test package."', 'description = "  "') +
      '\n[[config]]\nkey = "token"\ndisposition = "secret"\ntype = "string"\nkind = "Bad-Kind"\ndescription = "d"\n' +
      TOOL;
    expect(codes(refusals(text)).sort()).toEqual([
      'field_empty package.description',
      'secret_kind_invalid config[0].kind',
    ]);
  });

  it('attributes tool diagnostics to the package, the tool and the handler', () => {
    const [d] = refusals(HEAD + TOOL.replace('"replayable"', '"sometimes"'));
    expect(d).toMatchObject({
      code: 'replay_unknown',
      file: 'tools/pkg/manifest.toml',
      field: 'tools[0].replay',
      package: 'test.pkg',
      tool: 'pkg_search',
      handler: 'search',
    });
  });

  it('quotes keys that are not plain words in dotted paths', () => {
    const text =
      HEAD +
      TOOL.replace('q = { type = "string" }', '"a.b" = { type = "string", default = 1979-05-27 }');
    expect(codes(refusals(text))).toEqual([
      'value_not_json tools[0].parameters.properties["a.b"].default',
    ]);
  });

  it('refuses a schema file reference that is missing from the package, and one over the size cap', () => {
    const fileTool = TOOL.replace(/parameters = .*/, 'parameters = "schemas/in.json"');
    expect(codes(refusals(HEAD + fileTool))).toEqual(['schema_missing tools[0].parameters']);
    const big = JSON.stringify({ type: 'object', description: 'x'.repeat(256 * 1024) });
    expect(codes(refusals(HEAD + fileTool, { 'schemas/in.json': big }))).toEqual([
      'schema_too_large tools[0].parameters',
    ]);
    expect(codes(refusals(HEAD + fileTool, { 'schemas/in.json': '[1]' }))).toEqual([
      'schema_invalid tools[0].parameters',
    ]);
  });
});

describe('readPackage properties', () => {
  it('never throws on arbitrary text: it returns a package or diagnostics', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        const result = read(text);
        if (!result.ok) expect(result.diagnostics.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary lines appended to a valid manifest', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 6 }), (lines) => {
        const result = read(HEAD + TOOL + '\n' + lines.join('\n'));
        if (!result.ok)
          expect(result.diagnostics.every((d) => d.file === 'tools/pkg/manifest.toml')).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('reads what a disable does with calls in flight, and refuses a policy it does not know', () => {
    const cancel = read(HEAD.replace('[package]', '[package]\nin_flight = "cancel"') + TOOL);
    expect(cancel.ok && cancel.package.manifest.package.inFlight).toBe('cancel');
    const list = refusals(HEAD.replace('[package]', '[package]\nin_flight = "pause"') + TOOL);
    expect(codes(list)).toEqual(['in_flight_unknown package.in_flight']);
  });

  it('refuses any unknown [package] field by its dotted path', () => {
    const known = new Set([
      'id',
      'version',
      'mesh_api',
      'hook_protocol',
      'description',
      'in_flight',
    ]);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/).filter((k) => !known.has(k)),
        (key) => {
          const list = refusals(HEAD.replace('[package]', `[package]\n${key} = "value"`) + TOOL);
          expect(codes(list)).toEqual([`field_unknown package.${key}`]);
        },
      ),
      { numRuns: 100 },
    );
  });
});
