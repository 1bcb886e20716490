import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SECRET_ERROR_CODES } from '../secrets/errors.ts';
import { ERROR_CODES, familyOf, isKnownCode, isRetryableCode } from './error-codes.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** Every code literal the sources raise: `new MeshError('x'`, `static readonly code = 'x'`… */
function thrownCodes(): { code: string; where: string }[] {
  const found: { code: string; where: string }[] = [];
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
    for (const m of text.matchAll(/new\s+HttpError\s*\(\s*'([a-z_]+)'/g)) {
      found.push({ code: m[1] ?? '', where });
    }
  }
  return found;
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

  it('marks transient causes retryable and refusals not', () => {
    expect(isRetryableCode('database_unreachable')).toBe(true);
    expect(isRetryableCode('mcp_transport_failed')).toBe(true);
    expect(isRetryableCode('tool_unavailable')).toBe(true);
    expect(isRetryableCode('agent_not_found')).toBe(false);
    expect(isRetryableCode('invalid_tool_input')).toBe(false);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(ERROR_CODES)).toBe(true);
  });

  it('puts an unknown code in the internal family, not retryable', () => {
    expect(familyOf('no_such_code')).toBe('internal');
    expect(familyOf('toString')).toBe('internal');
    expect(isRetryableCode('no_such_code')).toBe(false);
  });

  it('says "handed over" is worth asking again about (the run goes on)', () => {
    expect(familyOf('run_interrupted')).toBe('handed_over');
    expect(isRetryableCode('run_interrupted')).toBe(true);
  });
});
