import { expect } from 'vitest';
import type { Db } from '../../src/store/db.ts';

/**
 * Where a leak would show: every form a secret takes when a server, a tool or a log prints it,
 * searched in everything Mesh keeps or shows. Haystacks are searched as given, with line breaks
 * removed (base64 wrapped at 76 columns), and with spaces and colons removed (hex dumps).
 */

/** The base64 text `bytes` always encodes to at each of the three offsets it may sit at. */
function base64Fragments(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    out.push(encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * padded.length) / 6)));
  }
  return out;
}

/** The forms a leak of `secret` would take. */
export function leakForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const hex = bytes.toString('hex');
  const forms = new Set([
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    Array.from(bytes, (b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    Array.from(bytes, (b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join(''),
    Array.from(secret, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    hex,
    hex.toUpperCase(),
  ]);
  for (const fragment of base64Fragments(bytes)) {
    forms.add(fragment);
    forms.add(fragment.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return [...forms].filter((f) => f.length >= 8);
}

/** A haystack and the normalized readings a leak is looked for in. */
function readings(haystack: string): string[] {
  return [haystack, haystack.replace(/\\r|\\n|\r|\n/g, ''), haystack.replace(/[ :]/g, '')];
}

/** Fails naming where, never printing the haystack, when any form of `secrets` is in `haystack`. */
export function expectNoLeak(where: string, haystack: string, secrets: readonly string[]): void {
  const read = readings(haystack);
  for (const secret of secrets)
    for (const form of leakForms(secret)) {
      const found = read.some((r) => r.includes(form));
      expect(found, `a form of a secret is in ${where}`).toBe(false);
    }
}

/** Every row of every table of the database, each column read as text or, for bytes, Latin-1. */
export async function databaseText(db: Db): Promise<Map<string, string>> {
  const { rows: tables } = await db.query<{ name: string }>(
    `select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const out = new Map<string, string>();
  for (const { name } of tables) {
    const { rows } = await db.query<Record<string, unknown>>(`select * from "${name}"`);
    const parts: string[] = [];
    for (const row of rows)
      for (const value of Object.values(row)) {
        if (value instanceof Uint8Array) parts.push(Buffer.from(value).toString('latin1'));
        else if (typeof value === 'string') parts.push(value);
        else if (value !== null && value !== undefined) parts.push(JSON.stringify(value));
      }
    out.set(name, parts.join('\n'));
  }
  return out;
}
