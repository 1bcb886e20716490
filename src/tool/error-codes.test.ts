import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SECRET_ERROR_CODES } from '../secrets/errors.ts';
import { ERROR_CODES, httpStatusOf, isKnownCode, isRetryableCode } from './error-codes.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Every code literal the sources raise: `new MeshError('x'`, `static readonly code = 'x'`… */
function thrownCodes(): { code: string; where: string; status?: number }[] {
  const found: { code: string; where: string; status?: number }[] = [];
  const patterns = [
    /new\s+(?:MeshError|StoreError)\s*\(\s*'([a-z_]+)'/g,
    /static\s+readonly\s+code\s*=\s*'([a-z_]+)'/g,
  ];
  for (const file of [...sources('src'), ...sources('tools')]) {
    const text = readFileSync(file, 'utf8');
    const where = relative(root, file);
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) found.push({ code: m[1] ?? '', where });
    }
    for (const m of text.matchAll(/new\s+HttpError\s*\(\s*(\d{3})\s*,\s*'([a-z_]+)'/g)) {
      found.push({ code: m[2] ?? '', where, status: Number(m[1]) });
    }
  }
  return found;
}

/** The rule the server applied before the table, by suffix and prefix: the table keeps it. */
function legacyStatus(code: string): number {
  if (code.endsWith('_not_found')) return 404;
  if (code.endsWith('_exists')) return 409;
  if (['model_call_failed', 'mcp_transport_failed', 'mcp_error'].includes(code)) return 502;
  if (['egress_refused', 'invalid_tool_provider', 'invalid_token'].includes(code)) return 400;
  const client = ['config_invalid', 'empty_message', 'message_too_long', 'missing_actor'];
  if (client.includes(code) || code.startsWith('secret_') || code.startsWith('invalid_')) {
    return code === 'secret_undecryptable' || code === 'secret_key_mismatch' ? 500 : 400;
  }
  if (['agent_has_no_model', 'provider_key_missing', 'provider_unsupported'].includes(code))
    return 409;
  return 500;
}

describe('the error code table', () => {
  it('holds every code thrown in src/ and tools/', () => {
    const found = thrownCodes();
    // The scan must see the codes it is meant to: a broken pattern would pass vacuously.
    expect(found.map((f) => f.code)).toEqual(
      expect.arrayContaining(['agent_not_found', 'lease_lost', 'database_error', 'unauthorized']),
    );
    const missing = found.filter((f) => !isKnownCode(f.code)).map((f) => `${f.where}: ${f.code}`);
    expect(missing).toEqual([]);
    for (const code of Object.values(SECRET_ERROR_CODES)) expect(isKnownCode(code)).toBe(true);
  });

  it('gives each HTTP refusal the status it is thrown with', () => {
    const mismatched = thrownCodes()
      .filter((f) => f.status !== undefined && f.status !== httpStatusOf(f.code))
      .map(
        (f) => `${f.where}: ${f.code} thrown as ${f.status}, table says ${httpStatusOf(f.code)}`,
      );
    expect(mismatched).toEqual([]);
  });

  it('answers every Mesh error code with the status the server gave it before the table', () => {
    const faces = new Set(
      thrownCodes()
        .filter((f) => f.status !== undefined)
        .map((f) => f.code),
    );
    // Codes added after the table have no earlier status to keep.
    const newer = new Set([
      'invalid_json',
      'agent_busy',
      'provider_in_use',
      'tool_provider_in_use',
      'tool_withheld',
      'instance_key_rotation_refused',
      'run_interrupted',
      'workspace_backend_unavailable',
      'workspace_file',
      'development_only',
      'query_provider',
      'read_target_refused',
      'web_provider',
    ]);
    const changed = Object.keys(ERROR_CODES)
      .filter((code) => !faces.has(code) && !newer.has(code))
      .filter((code) => httpStatusOf(code) !== legacyStatus(code));
    expect(changed).toEqual([]);
  });

  it('answers an unknown code with 500, not retryable', () => {
    expect(httpStatusOf('no_such_code')).toBe(500);
    expect(isRetryableCode('no_such_code')).toBe(false);
    expect(httpStatusOf('toString')).toBe(500);
  });

  it('marks transient causes retryable and refusals not', () => {
    expect(isRetryableCode('database_unreachable')).toBe(true);
    expect(isRetryableCode('mcp_transport_failed')).toBe(true);
    expect(isRetryableCode('tool_unavailable')).toBe(true);
    expect(isRetryableCode('agent_not_found')).toBe(false);
    expect(isRetryableCode('invalid_tool_input')).toBe(false);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(ERROR_CODES)).toBe(true);
    expect(Object.isFrozen(ERROR_CODES.agent_not_found)).toBe(true);
  });
});
