import fc from 'fast-check';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonSchema } from '../../src/model/json.ts';
import { apiRoutes } from '../../src/server/api.ts';
import { meshApp } from '../../src/server/server.ts';
import type { ServerEnv } from '../../src/server/server-env.ts';
import type { Db } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/**
 * Every route the API's Hono app serves, read from the app itself (not a hand-written list), gets
 * generated hostile requests: nesting deep enough to break a recursive walker, NUL and lone
 * surrogates, strings near and past the body limit, wrong JSON types and content types, and
 * hostile path and query parameters. The server must refuse what it cannot take with a 4xx that
 * names the field, never fail with a 5xx, never echo what it was sent, and store nothing of a
 * refused request.
 */

/** Marks every generated text, so an echo of one in a refusal is found. */
const CANARY = 'cAnArY';

const hostileText = fc.oneof(
  fc.constantFrom(
    `${CANARY}\u0000`,
    `\u0000`,
    `a${CANARY}\ud800`,
    `\udfff${CANARY}`,
    `${CANARY}\ud83d\ude00\u0000`,
    `${CANARY}\u0001\u001f\u007f`,
    `${CANARY}%00`,
    `../${CANARY}`,
    `${CANARY}'; drop table agents; --`,
    '',
    ' ',
  ),
  // The `~` keeps it from ever being a plausible name (even trimmed), which a refusal names back
  // by design ("no agent named …", quoteName in src/tool/errors.ts): the bare canary is one.
  fc.string({ unit: 'binary', maxLength: 12 }).map((s) => `${CANARY}~${s}`),
  fc.integer({ min: 1000, max: 120_000 }).map((n) => CANARY + 'x'.repeat(n)),
);

/** A hostile field name: a refusal may name it (clipped), so it carries no canary. */
const hostileKey = hostileText.map((t) => t.replaceAll(CANARY, 'k').slice(0, 300));

/** A plausible value for a field, so that requests reach the handlers behind the schema. */
const plausibleText = fc.constantFrom('ada', 'tracker', 'direct', 'x', 'page_size', 'https://a.b');

const scalar = fc.oneof(
  hostileText,
  plausibleText,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);

/**
 * A value nested far deeper than any schema: arrays or objects around a hostile text. Built when
 * the body is serialized, so that fast-check's report of a counterexample stays short.
 */
class Deep {
  constructor(
    readonly depth: number,
    readonly arrays: boolean,
    readonly leaf: string,
  ) {}
  /** The nested value as JSON text, built without recursion (JSON.stringify would overflow). */
  text(): string {
    const [open, close] = this.arrays ? ['[', ']'] : ['{"a":', '}'];
    return open.repeat(this.depth) + JSON.stringify(this.leaf) + close.repeat(this.depth);
  }
  [fc.toStringMethod](): string {
    return `Deep(${this.depth}, ${this.arrays ? 'arrays' : 'objects'}, ${JSON.stringify(this.leaf.slice(0, 20))})`;
  }
}

/** A body as JSON text, each {@link Deep} written in place. */
function serialize(body: unknown): string {
  const deep: Deep[] = [];
  const text = JSON.stringify(body, (_key, value: unknown) =>
    value instanceof Deep ? `\u0001deep${deep.push(value) - 1}\u0001` : value,
  );
  return text.replace(
    /"\\u0001deep(\d+)\\u0001"/g,
    (_, i: string) => deep[Number(i)]?.text() ?? '',
  );
}

const deep = fc
  .tuple(fc.integer({ min: 100, max: 5000 }), fc.boolean(), hostileText)
  .map(([depth, arrays, leaf]) => new Deep(depth, arrays, leaf));

const anyValue = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileKey, scalar, { maxKeys: 3 }) },
);

/** A body shaped after the route's schema (its fields, hostile values), or anything at all. */
function bodyFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const properties = Object.keys((schema?.['properties'] as object | undefined) ?? {});
  const shaped =
    properties.length === 0
      ? fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { maxKeys: 3 })
      : fc.record(Object.fromEntries(properties.map((p) => [p, anyValue])), {
          requiredKeys: [],
        });
  return fc.oneof(
    { weight: 5, arbitrary: shaped },
    { weight: 1, arbitrary: anyValue },
    {
      weight: 1,
      arbitrary: fc.tuple(shaped, hostileKey).map(([b, key]) => ({ ...(b as object), [key]: 1 })),
    },
  );
}

/** How the body is sent: as JSON, as raw text that is not (quite) JSON, or not as JSON at all. */
const framing = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'json' as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { kind: 'type' as const, type: 'text/plain' },
      { kind: 'type' as const, type: 'application/x-www-form-urlencoded' },
      { kind: 'type' as const, type: 'application/json; charset=utf-16' },
      { kind: 'type' as const, type: '' },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { kind: 'raw' as const, raw: '{"name": "ada"' },
      { kind: 'raw' as const, raw: '{"name": "\\u0000"}' },
      { kind: 'raw' as const, raw: '{"name": "\\ud800"}' },
      { kind: 'raw' as const, raw: '{"\\u0000": 1}' },
      { kind: 'raw' as const, raw: `${'['.repeat(60_000)}${']'.repeat(60_000)}` },
      { kind: 'raw' as const, raw: `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}` },
      { kind: 'raw' as const, raw: `"${'y'.repeat(300 * 1024)}"` },
      { kind: 'raw' as const, raw: '\u0000' },
    ),
  },
);

/** Percent-encodes every byte of a text's UTF-8 (a lone surrogate is sent as U+FFFD). */
function encodeSegment(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

/**
 * Path parameters: mostly names that exist, so the body is read, or hostile texts. A refusal may
 * name a parameter that looks like a name, so these carry no canary.
 */
const param = fc.oneof(
  { weight: 2, arbitrary: plausibleText.map(encodeSegment) },
  { weight: 2, arbitrary: hostileKey.filter((t) => t.length < 150).map(encodeSegment) },
  { weight: 1, arbitrary: fc.constantFrom('%ED%A0%80', '%C0%80', '%00', '%2F', '%', '..') },
);

const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?limit=%00', '?limit=1e400', '?limit=-1', '?x=%ED%A0%80', '?%00=1'),
  hostileText.filter((t) => t.length < 150).map((t) => `?limit=${encodeSegment(t)}`),
);

/** Row counts of every table, to prove a refused request stored nothing. */
/** The statement counting every table's rows, per database (its tables do not change). */
const countStatements = new WeakMap<Db, string>();

async function rowCounts(db: Db): Promise<Record<string, number>> {
  let sql = countStatements.get(db);
  if (sql === undefined) {
    const tables = await db.query<{ name: string }>(
      `select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`,
    );
    sql = tables.rows
      .map((t) => `select '${t.name}' as name, count(*)::int as n from "${t.name}"`)
      .join(' union all ');
    countStatements.set(db, sql);
  }
  const counts = await db.query<{ name: string; n: number }>(sql);
  return Object.fromEntries(counts.rows.map((r) => [r.name, r.n]));
}

/**
 * The row counts before each request: read once, then carried from one refused request to the
 * next (a refusal stores nothing, which is what is checked), and read again after an accepted one.
 */
function countsBetweenRequests(db: Db) {
  let known: Record<string, number> | undefined;
  return {
    before: async () => (known ??= await rowCounts(db)),
    /** After an accepted request: the next one reads the counts again. */
    changed: () => {
      known = undefined;
    },
    /** After a refused one: the counts now, which must equal the counts before. */
    after: async () => (known = await rowCounts(db)),
  };
}

interface Refusal {
  readonly error?: {
    readonly code?: unknown;
    readonly message?: unknown;
    readonly field?: unknown;
  };
}

describe.each(testDatabases())('hostile requests to every route on $name', (database) => {
  let server: TestServer;
  let app: Hono<ServerEnv>;
  let dispose: () => Promise<void>;
  const logs: string[] = [];

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
    await scriptedAgent(server.mesh, { rules: [], fallback: { content: 'Hello.' } }, 'ada');
    app = meshApp(server.mesh, { log: (line) => logs.push(line), version: 'test' });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  it('answers no 5xx, names the field of every 400, echoes nothing and stores nothing refused', async () => {
    const served = new Map<string, { method: string; path: string }>();
    for (const r of app.routes) {
      if (r.method === 'ALL' || !r.path.startsWith('/api/')) continue;
      served.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
    }
    // The enumeration must see the API: a broken filter would pass vacuously.
    expect(served.size).toBe(apiRoutes.length);

    for (const { method, path } of served.values()) {
      const declared = apiRoutes.find(
        (r) => r.method === method && r.path.replace(/\{(\w+)\}/g, ':$1') === path,
      );
      const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
      const request = fc.record({
        params: fc.tuple(...names.map(() => param)),
        query,
        body: bodyFor(declared?.body),
        framing,
      });
      const counts = countsBetweenRequests(server.mesh.db);
      await fc.assert(
        fc.asyncProperty(request, async ({ params, query: search, body, framing: how }) => {
          let target = path;
          for (const [i, name] of names.entries())
            target = target.replace(`:${name}`, params[i] ?? '');
          const headers: Record<string, string> = { authorization: `Bearer ${server.token}` };
          let payload: string | undefined;
          if (method !== 'GET') {
            payload = how.kind === 'raw' ? how.raw : serialize(body);
            const type = how.kind === 'type' ? how.type : 'application/json';
            if (type !== '') headers['content-type'] = type;
          }
          const before = await counts.before();
          const res = await app.request(`http://mesh.test${target}${search}`, {
            method,
            headers,
            ...(payload === undefined ? {} : { body: payload }),
          });
          const text = await res.text();
          const where = `${method} ${target.slice(0, 120)}${search.slice(0, 40)} → ${res.status} ${text.slice(0, 300)}`;
          expect(res.status, where).toBeLessThan(500);
          if (res.status < 400) return counts.changed();
          const refusal = JSON.parse(text) as Refusal;
          expect(typeof refusal.error?.code, where).toBe('string');
          expect(typeof refusal.error?.message, where).toBe('string');
          if (res.status === 400 || res.status === 413 || res.status === 415)
            expect(typeof refusal.error?.field, where).toBe('string');
          expect(text, where).not.toContain(CANARY);
          expect(await counts.after(), where).toEqual(before);
        }),
        { numRuns: 12 },
      );
    }
    expect(logs.filter((l) => l.startsWith('error'))).toEqual([]);
  }, 120_000);

  it('answers no 5xx to hostile UI requests and stores nothing of a refused form post', async () => {
    logs.length = 0; // this test's own failures, not the API test's again
    const login = await app.request('http://mesh.test/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: server.token }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = async (path: string) =>
      (await app.request(`http://mesh.test${path}`, { headers: { cookie } })).text();
    const agents = await page('/agents');
    const csrf = /name="csrf" value="([^"]+)"/.exec(agents)?.[1] ?? '';
    expect(csrf).not.toBe('');

    // Every page and form the app serves outside the API, read from the app; logging out would
    // end the session the rest of the run uses.
    const served = new Map<string, { method: string; path: string }>();
    for (const r of app.routes) {
      if (r.method === 'ALL' || r.path.startsWith('/api') || r.path.includes('*')) continue;
      if (r.path === '/logout' || r.path === '/login' || r.path.startsWith('/assets/')) continue;
      if (r.path === '/favicon.ico') continue;
      served.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
    }
    expect([...served.values()].filter((r) => r.method === 'POST').length).toBeGreaterThan(10);

    // The form fields the pages offer, read from the pages themselves.
    const fields = new Set<string>();
    for (const { method, path } of served.values()) {
      if (method !== 'GET') continue;
      const html = await page(
        path.replace(/:(\w+)/g, (_, n: string) => (n === 'package' ? 'tracker' : 'ada')),
      );
      for (const m of html.matchAll(/name="([^"]+)"/g)) if (m[1] !== 'csrf') fields.add(m[1] ?? '');
    }
    expect(fields.size).toBeGreaterThan(5);
    const form = fc.dictionary(
      fc.oneof(fc.constantFrom(...fields), hostileKey),
      fc.oneof(hostileText, plausibleText),
      { maxKeys: 4 },
    );

    for (const { method, path } of served.values()) {
      const names = [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
      const request = fc.record({ params: fc.tuple(...names.map(() => param)), query, form });
      const counts = countsBetweenRequests(server.mesh.db);
      await fc.assert(
        fc.asyncProperty(request, async ({ params, query: search, form: fieldsSent }) => {
          let target = path;
          for (const [i, name] of names.entries())
            target = target.replace(`:${name}`, params[i] ?? '');
          const before = await counts.before();
          const body = new URLSearchParams({ ...fieldsSent, csrf }).toString();
          const res = await app.request(`http://mesh.test${target}${search}`, {
            method,
            headers: {
              cookie,
              ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            },
            ...(method === 'POST' ? { body } : {}),
          });
          const text = await res.text();
          const where = `${method} ${target.slice(0, 120)}${search.slice(0, 40)} → ${res.status}`;
          expect(res.status, `${where} ${text.slice(0, 300)}`).toBeLessThan(500);
          const flash = /mesh_flash=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '';
          const notice = flash ? Buffer.from(flash, 'base64url').toString('utf8') : '';
          // A refusal's message quotes nothing that was sent. The form's own fields come back to
          // the person who typed them (to fill the form again), never a secret's or a stray key's.
          const parsed = (notice ? JSON.parse(notice) : {}) as {
            text?: string;
            kept?: Record<string, string>;
          };
          expect(parsed.text ?? '', where).not.toContain(CANARY);
          for (const name of Object.keys(parsed.kept ?? {})) {
            expect(name, where).toMatch(/^[a-z][a-z0-9_]{0,40}$/);
            expect(name, where).not.toMatch(
              /(^|_)(key|token|secret|password|value|credential)($|_)/,
            );
          }
          if (res.status >= 400) {
            expect(text, where).not.toContain(CANARY);
            if (res.status === 400) expect(text, where).toMatch(/`(form|path|query)[.`]/);
          }
          if (res.status >= 400 || notice.includes('"kind":"error"'))
            expect(await counts.after(), where).toEqual(before);
          else counts.changed();
        }),
        { numRuns: 6 },
      );
    }
    expect(logs.filter((l) => l.startsWith('error'))).toEqual([]);
  }, 120_000);
});
