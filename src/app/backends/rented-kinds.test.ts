import { describe, expect, it } from 'vitest';
import { BROWSER_KINDS, WORKSPACE_KINDS } from './kinds.ts';
import { addInputSchema, checkNewBackend, type NewRentedBackend } from './rented-kinds.ts';

const KEY = 'sk-SECRET-KEY-0123456789';

function refusal(family: typeof WORKSPACE_KINDS, input: NewRentedBackend) {
  try {
    checkNewBackend(family, input);
  } catch (error) {
    const e = error as { code: string; message: string; data?: { field?: string } };
    expect(e.message).not.toContain(KEY);
    return { code: e.code, field: e.data?.field, message: e.message };
  }
  throw new Error('accepted');
}

describe('a rented-backend family read from its declaration', () => {
  it('accepts each kind with what it needs, storing its settings', () => {
    expect(
      checkNewBackend(WORKSPACE_KINDS, { name: 'dev', kind: 'local', development: true }),
    ).toEqual({ kind: 'local', development: true, settings: {}, apiKey: undefined });
    expect(
      checkNewBackend(WORKSPACE_KINDS, {
        name: 'e2b',
        kind: 'e2b',
        api_key: `${KEY}\n`,
        api_url: 'https://api.e2b.example/',
        template: 'base:v2',
      }),
    ).toEqual({
      kind: 'e2b',
      development: false,
      settings: { api_url: 'https://api.e2b.example', template: 'base:v2' },
      apiKey: KEY,
    });
    expect(
      checkNewBackend(BROWSER_KINDS, {
        name: 'cf',
        kind: 'cloudflare',
        api_key: KEY,
        account_id: 'acct-1',
        base_url: 'http://127.0.0.1:9/',
        development: true,
      }).settings,
    ).toEqual({ account_id: 'acct-1', base_url: 'http://127.0.0.1:9' });
  });

  it('refuses what a kind does not take, or lacks, naming the field and never the value', () => {
    expect(refusal(WORKSPACE_KINDS, { name: 'l', kind: 'local' })).toMatchObject({
      code: 'development_only',
      field: 'input.development',
    });
    expect(
      refusal(WORKSPACE_KINDS, { name: 'l', kind: 'local', development: true, api_key: KEY }),
    ).toMatchObject({ code: 'invalid_backend', field: 'input.api_key' });
    expect(
      refusal(WORKSPACE_KINDS, { name: 'l', kind: 'local', development: true, template: 'x' }),
    ).toMatchObject({
      field: 'input.template',
      message: 'a local workspace backend takes no `template`',
    });
    expect(refusal(WORKSPACE_KINDS, { name: 'e', kind: 'e2b' })).toMatchObject({
      field: 'input.api_key',
      message: 'an e2b workspace backend needs its API key (`api_key`)',
    });
    expect(
      refusal(WORKSPACE_KINDS, { name: 'e', kind: 'e2b', api_key: KEY, template: '../x' }),
    ).toMatchObject({
      field: 'input.template',
      message: '`template` is not a template name or id',
    });
    expect(refusal(BROWSER_KINDS, { name: 'cf', kind: 'cloudflare', api_key: KEY })).toMatchObject({
      field: 'input.account_id',
      message: 'a cloudflare browser backend needs `account_id`',
    });
    expect(
      refusal(BROWSER_KINDS, { name: 's', kind: 'steel', api_key: KEY, project_id: 'p' }),
    ).toMatchObject({ field: 'input.project_id' });
    expect(
      refusal(BROWSER_KINDS, {
        name: 'b',
        kind: 'browserbase',
        api_key: KEY,
        base_url: 'http://127.0.0.1:9',
      }),
    ).toMatchObject({ field: 'input.base_url' });
    // Addresses a control plane must not be pointed at, refused when registered (the guarded
    // fetch refuses them again on every request): cloud metadata, private, and loopback without
    // the development setting.
    for (const [base_url, what] of [
      ['https://169.254.169.254', /link-local/],
      ['https://10.1.2.3/bb', /private/],
      ['https://127.0.0.1:8443', /loopback/],
      ['https://gw.example.com/?token=x', /query or fragment/],
    ] as const) {
      const r = refusal(BROWSER_KINDS, { name: 's', kind: 'steel', api_key: KEY, base_url });
      expect(r).toMatchObject({ code: 'invalid_backend', field: 'input.base_url' });
      expect(r.message).toMatch(what);
      expect(r.message).not.toContain(base_url);
    }
    expect(refusal(BROWSER_KINDS, { name: 'k', kind: 'kubernetes' })).toMatchObject({
      field: 'input.kind',
      message:
        'unknown browser backend kind "kubernetes"; the kinds are local, cloudflare, browserbase, steel',
    });
    expect(refusal(BROWSER_KINDS, { name: 'Bad Name', kind: 'local' })).toMatchObject({
      field: 'input.name',
    });
    const wrongType = refusal(WORKSPACE_KINDS, {
      name: 'e',
      kind: 'e2b',
      api_key: KEY,
      template: { x: 1 },
    });
    expect(wrongType).toMatchObject({ code: 'invalid_backend', field: 'input.template' });
  });

  it('makes the add input schema from the same declaration: every kind and every setting', () => {
    for (const family of [WORKSPACE_KINDS, BROWSER_KINDS]) {
      const schema = addInputSchema(family);
      expect(schema.properties['kind']?.['enum']).toEqual(family.kinds.map((k) => k.name));
      for (const s of family.settings)
        expect(schema.properties[s.field]).toMatchObject({
          type: 'string',
          maxLength: s.maxLength,
          description: s.description,
        });
      expect(Object.keys(schema.properties)).toEqual([
        'name',
        'kind',
        'development',
        ...family.settings.map((s) => s.field),
        'api_key',
      ]);
    }
  });
});
