import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isMeshError } from '../tool/errors.ts';
import { SECRET_ERROR_CODES } from './errors.ts';
import {
  agentToolOwnerId,
  checkSecretKind,
  checkSecretOwner,
  checkSecretValue,
  defaultSecretFormat,
  MAX_SECRET_VALUE_BYTES,
  type SecretOwner,
} from './secret-input.ts';

const AGENT = '6f0d8f5e-3a4b-4c2d-9e1f-0a1b2c3d4e5f';

function refused(fn: () => unknown): { code: string; message: string; field: unknown } {
  try {
    fn();
  } catch (error) {
    if (!isMeshError(error)) throw error;
    return { code: error.code, message: error.message, field: error.data?.['field'] };
  }
  throw new Error('expected a refusal');
}

describe('secret kinds', () => {
  it('accepts exactly the kinds manifests may need', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/), (kind) => {
        expect(checkSecretKind(kind)).toBe(kind);
      }),
    );
  });

  it('refuses anything else, naming the field and not the value', () => {
    for (const kind of ['', 'Linear', '1key', 'a-b', 'a'.repeat(65), 'kind-canary-xyz']) {
      const r = refused(() => checkSecretKind(kind));
      expect(r.code).toBe(SECRET_ERROR_CODES.kindInvalid);
      expect(r.field).toBe('kind');
      if (kind) expect(r.message).not.toContain(kind);
    }
  });
});

describe('secret values', () => {
  it('accepts up to 64 KiB of UTF-8, counted in bytes', () => {
    expect(checkSecretValue('a'.repeat(MAX_SECRET_VALUE_BYTES))).toHaveLength(
      MAX_SECRET_VALUE_BYTES,
    );
    const refusal = refused(() => checkSecretValue('a'.repeat(MAX_SECRET_VALUE_BYTES + 1)));
    expect(refusal.code).toBe(SECRET_ERROR_CODES.valueInvalid);
    // 32 Ki two-byte characters are 64 KiB; one more is over, though far fewer than 64 Ki chars.
    expect(() => checkSecretValue('é'.repeat(32 * 1024), 'document')).not.toThrow();
    expect(() => checkSecretValue('é'.repeat(32 * 1024 + 1), 'document')).toThrow();
  });

  it('refuses empty and non-string values, and lone surrogates that UTF-8 would alter', () => {
    for (const value of ['', 42, null, undefined, 'canary\uD800value']) {
      const r = refused(() => checkSecretValue(value as string));
      expect(r.code).toBe(SECRET_ERROR_CODES.valueInvalid);
      expect(r.field).toBe('value');
      expect(r.message).not.toContain('canary');
    }
    expect(checkSecretValue('{"state":"🔑"}', 'document')).toBe('{"state":"🔑"}');
  });

  it('accepts a credential that is one line of printable ASCII, or (a package key) a PEM block', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[!-~](?:[ -~]{0,80}[!-~])?$/), (token) => {
        expect(checkSecretValue(token)).toBe(token);
      }),
    );
    const pem =
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq83+/w==\n-----END RSA PRIVATE KEY-----\n';
    expect(checkSecretValue(pem, 'key')).toBe(pem);
    expect(checkSecretValue(pem.replaceAll('\n', '\r\n').trimEnd(), 'key')).toBeDefined();
  });

  it('refuses a PEM-shaped model key, MCP token or backend key: a header carries one line', () => {
    const pem =
      '-----BEGIN PRIVATE KEY-----\nMIIEcanaryAKCAQEA\nq83+/w==\n-----END PRIVATE KEY-----';
    for (const field of ['api_key', 'token', 'value']) {
      const r = refused(() => checkSecretValue(pem, 'line', field));
      expect(r.code).toBe(SECRET_ERROR_CODES.valueInvalid);
      expect(r.field).toBe(field);
      expect(r.message).toBe(
        `\`${field}\` holds a line break: a key or token sent in a header is one line of printable text`,
      );
    }
    expect(defaultSecretFormat('agent_tool')).toBe('key');
    for (const owner of [
      'model_provider',
      'tool_provider',
      'agent_tool_provider',
      'execution_backend',
      'browser_backend',
      'agent',
    ] as const)
      expect(defaultSecretFormat(owner)).toBe('line');
  });

  it('refuses a credential no HTTP request could carry, naming the field and the fault, never the value', () => {
    const cases: [string, RegExp][] = [
      ['canary\nsecond-line', /line break/],
      ['canary\r', /line break/],
      ['canary\0tail', /NUL/],
      ['canary\x1btail', /control character/],
      ['canary\x7f', /control character/],
      ['canary—dash', /outside printable ASCII/],
      ['canary 🔑', /outside printable ASCII/],
      [' canary', /whitespace/],
      ['canary\t', /control character/],
      ['-----BEGIN KEY-----\ncanary\0\n-----END KEY-----', /NUL/],
    ];
    for (const [value, why] of cases) {
      const r = refused(() => checkSecretValue(value, 'key', 'api_key'));
      expect(r.code).toBe(SECRET_ERROR_CODES.valueInvalid);
      expect(r.field).toBe('api_key');
      expect(r.message).toMatch(/^`api_key` /);
      expect(r.message).toMatch(why);
      expect(r.message).not.toContain('canary');
    }
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.constantFrom('\n', '\r', '\0', '\x01', '\u2028', 'é'),
        fc.string({ maxLength: 40 }),
        (head, bad, tail) => {
          expect(() => checkSecretValue(`x${head}${bad}${tail}x`)).toThrow(/`value` /);
        },
      ),
    );
  });
});

describe('secret owners', () => {
  it('accepts each owner type with its id shape', () => {
    const owners: SecretOwner[] = [
      { ownerType: 'agent', ownerId: AGENT },
      { ownerType: 'agent_tool', ownerId: agentToolOwnerId(AGENT, 'mesh.linear') },
      { ownerType: 'model_provider', ownerId: 'openrouter' },
      { ownerType: 'agent_tool_provider', ownerId: `${AGENT}:linear-mcp` },
    ];
    for (const owner of owners) expect(checkSecretOwner(owner)).toEqual(owner);
  });

  it('returns only the owner fields, so nothing else rides along', () => {
    const owner = { ownerType: 'agent', ownerId: AGENT, value: 'canary' } as SecretOwner;
    expect(checkSecretOwner(owner)).toEqual({ ownerType: 'agent', ownerId: AGENT });
  });

  it('refuses an owner type outside the closed set and ids of the wrong shape', () => {
    const bad: [unknown, string, string][] = [
      ['agent_connector', AGENT, 'ownerType'],
      ['AGENT', AGENT, 'ownerType'],
      ['agent', 'not-a-uuid', 'ownerId'],
      ['agent_tool', AGENT, 'ownerId'],
      ['agent_tool', `${AGENT}:`, 'ownerId'],
      ['agent_tool', `${AGENT}:Bad Package`, 'ownerId'],
      ['model_provider', '', 'ownerId'],
      ['model_provider', 'has space', 'ownerId'],
      ['model_provider', 'x'.repeat(201), 'ownerId'],
    ];
    for (const [ownerType, ownerId, field] of bad) {
      const r = refused(() => checkSecretOwner({ ownerType, ownerId } as SecretOwner));
      expect(r.code).toBe(SECRET_ERROR_CODES.ownerInvalid);
      expect(r.field).toBe(field);
    }
  });
});
