import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { callToolAsOperator, operatorCallDriver } from '../../src/app/runs/operator-call.ts';
import { addWebProvider, grantWebProvider } from '../../src/app/backends/web-admin.ts';
import { driveHeldRun } from '../../src/run/held-run.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { insertAgent } from '../../src/store/agents.ts';
import type { Db } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';
import { FAKE_CLOUDFLARE_ACCOUNT, startWebFake, type WebFake } from '../support/web-fakes/index.ts';

const EXA_KEY = `exa-${randomUUID()}`;
const BRAVE_KEY = `brave-${randomUUID()}`;
const CF_KEY = `cf-${randomUUID()}`;

/** An observation's text, or '' when there is none. */
function textOf(observation: Readonly<Record<string, unknown>>): string {
  const text = observation['text'];
  return typeof text === 'string' ? text : '';
}

/** Every text-like column of every table, as text: where a leaked key would be found. */
async function dumpTextColumns(db: Db): Promise<string> {
  const { rows: columns } = await db.query<{ table_name: string; column_name: string }>(
    `select table_name, column_name from information_schema.columns
     where table_schema = 'public' and data_type in ('text', 'jsonb', 'json', 'character varying')`,
  );
  const parts: string[] = [];
  for (const c of columns) {
    const { rows } = await db.query<{ v: string | null }>(
      `select ${c.column_name}::text as v from ${c.table_name}`,
    );
    for (const r of rows) if (r.v !== null) parts.push(r.v);
  }
  return parts.join('\n');
}

/*
 * The web verbs end to end over the real adapters and loopback fakes of the vendors' APIs: which
 * provider serves which verb, results normalized, the per-run ceiling counting every attempt
 * (retries included) and ending the run when a call needs one more, unsupported filters and
 * unsafe URLs refused before any provider is called, and the keys nowhere but on the wire.
 */
describe.each(testDatabases())('web tools on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let exa: WebFake;
  let brave: WebFake;
  let cloudflare: WebFake;
  /** A server nobody registered: nothing may ever reach it. */
  let stray: Server;
  let strayHits = 0;
  let strayUrl: string;
  const searcher = `web-${randomUUID().slice(0, 8)}`; // exa: search and read
  const split = `${searcher}-split`; // brave searches, cloudflare reads
  const tight = `${searcher}-tight`; // exa with a ceiling of 2
  const wrong = `${searcher}-wrong`; // a provider whose key the vendor refuses

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey(), { web: { baseDelayMs: 1 } });
    dispose = () => opened.dispose();
    [exa, brave, cloudflare] = await Promise.all([
      startWebFake('exa', { apiKey: EXA_KEY }),
      startWebFake('brave', { apiKey: BRAVE_KEY }),
      startWebFake('cloudflare', { apiKey: CF_KEY, pathPrefix: '/gw' }),
    ]);
    stray = createServer((_req, res) => {
      strayHits += 1;
      res.end('{}');
    });
    await new Promise<void>((resolve) => stray.listen(0, '127.0.0.1', resolve));
    strayUrl = `http://127.0.0.1:${(stray.address() as AddressInfo).port}`;

    const loopback = { allowLoopbackHttp: true };
    const provider = (name: string, kind: string, baseUrl: string, apiKey: string, more = {}) =>
      addWebProvider(mesh, { name, kind, baseUrl, apiKey, ...loopback, ...more });
    await provider('exa_main', 'exa', exa.baseUrl, EXA_KEY);
    await provider('exa_tight', 'exa', exa.baseUrl, EXA_KEY, { maxCallsPerRun: 2 });
    await provider('exa_wrong', 'exa', exa.baseUrl, 'not-the-key');
    await provider('brave', 'brave', brave.baseUrl, BRAVE_KEY);
    await provider('cf', 'cloudflare', cloudflare.baseUrl, CF_KEY, {
      accountId: FAKE_CLOUDFLARE_ACCOUNT,
    });
    const grants: [string, string][] = [
      [searcher, 'exa_main'],
      [split, 'brave'],
      [split, 'cf'],
      [tight, 'exa_tight'],
      [wrong, 'exa_wrong'],
    ];
    for (const name of [searcher, split, tight, wrong])
      await insertAgent(mesh.db, { id: randomUUID(), name });
    for (const [agent, p] of grants)
      await grantWebProvider(mesh, { agent, provider: p, operator: 'test' });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([exa?.close(), brave?.close(), cloudflare?.close()]);
    await new Promise((resolve) => stray?.close(resolve));
    await dispose?.();
  });

  const call = (agent: string, tool: string, args: object) =>
    callToolAsOperator(mesh, { agent, tool, arguments: JSON.stringify(args), operator: 'test' });

  const usageOf = async (runId: string) =>
    (
      await mesh.db.query<{ usage: Record<string, unknown> }>(
        'select usage from runs where id = $1',
        [runId],
      )
    ).rows[0]!.usage;

  it('searches through the granted provider: normalized results, the provider and its meter', async () => {
    exa.reset();
    const result = await call(searcher, 'web_search', { query: 'node streams', count: 3 });
    expect(result.status).toBe('succeeded');
    expect(result.observation?.kind).toBe('result');
    const data = result.observation?.data as {
      results: { title: string; url: string; snippet: string; published_at?: string }[];
      provider: string;
      provider_calls: number;
    };
    expect(data.provider).toBe('exa_main');
    expect(data.provider_calls).toBe(1);
    expect(data.results).toHaveLength(3);
    for (const r of data.results) {
      expect(r.url).toMatch(/^https:\/\//);
      expect(r.title).not.toBe('');
      expect(r.published_at).toMatch(/^\d{4}-\d{2}-\d{2}/);
    }
    expect(result.observation?.text).toContain(data.results[0]!.url);
    expect(await usageOf(result.runId)).toMatchObject({ providerCalls: { exa_main: 1 } });
    expect(exa.requests).toHaveLength(1);
  });

  it('serves each verb by the first granted provider that can: brave searches, cloudflare reads', async () => {
    brave.reset();
    cloudflare.reset();
    const found = await call(split, 'web_search', { query: 'release notes', recency: 'week' });
    expect(found.observation?.data).toMatchObject({ provider: 'brave' });
    expect(brave.requests[0]?.query).toMatchObject({ freshness: 'pw' });
    const url = (found.observation?.data as { results: { url: string }[] }).results[0]!.url;
    const page = await call(split, 'web_read', { url });
    expect(page.status).toBe('succeeded');
    expect(page.observation?.data).toMatchObject({ provider: 'cf', provider_calls: 1, url });
    expect(page.observation?.text).toContain(url);
    // The gateway prefix of the registered base URL is kept.
    expect(cloudflare.requests[0]?.path).toMatch(/^\/gw\/client\/v4\/accounts\//);
  });

  it('refuses a filter the serving provider does not support, by name, before calling it', async () => {
    brave.reset();
    const refused = await call(split, 'web_search', {
      query: 'x',
      include_domains: ['nodejs.org'],
    });
    expect(refused.observation?.kind).toBe('invalid_input');
    expect(refused.observation?.text).toContain('include_domains');
    expect(brave.requests).toHaveLength(0);
  });

  it('refuses unsafe URLs by name before any provider is called, and never reaches a stray address', async () => {
    cloudflare.reset();
    strayHits = 0;
    const unsafe = [
      strayUrl,
      'http://localhost:8080/admin',
      'http://10.1.2.3/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://[fd00::1]/',
      'http://2130706433/',
      'https://user:password@example.com/',
      'file:///etc/passwd',
      'ftp://example.com/file',
      'http://intranet/',
      'https://db.internal/',
      'https://printer.local/',
      `https://example.com/${'a'.repeat(2100)}`,
      'not a url',
    ];
    for (const url of unsafe) {
      const refused = await call(split, 'web_read', { url });
      expect(refused.observation?.kind, url.slice(0, 60)).toBe('invalid_input');
      // The refusal names what is wrong and never echoes the URL.
      expect(refused.observation?.text).not.toContain(url);
    }
    // No argument can point a verb at an address the operator did not register.
    const redirected = await call(split, 'web_read', {
      url: 'https://example.com/',
      base_url: strayUrl,
    });
    expect(redirected.observation?.kind).toBe('invalid_input');
    const searchRedirected = await call(split, 'web_search', { query: 'x', endpoint: strayUrl });
    expect(searchRedirected.observation?.kind).toBe('invalid_input');
    expect(cloudflare.requests).toHaveLength(0);
    expect(strayHits).toBe(0);
  });

  it('counts every attempt, retries included: a 503 then success costs two calls', async () => {
    exa.reset();
    exa.failNext(1, 503);
    const result = await call(searcher, 'web_search', { query: 'flaky' });
    expect(result.observation?.kind).toBe('result');
    expect(result.observation?.data).toMatchObject({ provider: 'exa_main', provider_calls: 2 });
    expect(await usageOf(result.runId)).toMatchObject({ providerCalls: { exa_main: 2 } });
  });

  it('stops retrying at the ceiling, and ends the run when a call needs one more', async () => {
    exa.reset();
    exa.failNext(5, 503);
    const agentId = (
      await mesh.db.query<{ id: string }>('select id from agents where name = $1', [tight])
    ).rows[0]!.id;
    const owner = `test:${randomUUID().slice(0, 8)}`;
    const run = await mesh.ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { maxToolCalls: 5 },
      checkpoint: scriptCheckpoint([
        { id: 'c1', name: 'web_search', arguments: '{"query":"down"}' },
        { id: 'c2', name: 'web_search', arguments: '{"query":"again"}' },
        { id: 'c3', name: 'web_search', arguments: '{"query":"never"}' },
      ]),
      lease: { owner, leaseMs: 30_000 },
    });
    const end = await driveHeldRun(mesh.ledger, operatorCallDriver(mesh), run, {
      runId: run.id,
      owner,
      epoch: run.leaseEpoch,
    });
    expect(end.status).toBe('budget_exhausted');
    expect(end.reason).toMatch(/ceiling of 2 calls to web provider exa_tight is spent/);
    // Two attempts (the ceiling, not the three a call may make), then none at all.
    expect(exa.requests).toHaveLength(2);
    const observations = (await mesh.ledger.steps(run.id)).filter((s) => s.kind === 'observation');
    expect(observations.map((o) => o.observation['kind'])).toEqual(['tool_error', 'tool_error']);
    expect(textOf(observations[0]!.observation)).toMatch(/unavailable after 2 attempts.*now spent/);
    expect(textOf(observations[1]!.observation)).toMatch(/budget exhausted/);
    expect(await usageOf(run.id)).toMatchObject({ providerCalls: { exa_tight: 2 }, toolCalls: 2 });
  });

  it('says a refused credential is the operator’s to fix, and never shows any key', async () => {
    exa.reset();
    const refused = await call(wrong, 'web_search', { query: 'anything' });
    expect(refused.observation?.kind).toBe('tool_error');
    expect(refused.observation?.text).toMatch(/refused its credential; an operator/);
    expect(refused.observation?.data).toMatchObject({ error: 'bad_credential', provider_calls: 1 });
    const everything = await dumpTextColumns(mesh.db);
    for (const key of [EXA_KEY, BRAVE_KEY, CF_KEY, 'not-the-key'])
      expect(everything).not.toContain(key);
    // The fakes saw the keys where the vendors want them (and record no credential header).
    for (const fake of [exa, brave, cloudflare])
      for (const r of fake.requests)
        for (const key of [EXA_KEY, BRAVE_KEY, CF_KEY])
          expect(JSON.stringify(r)).not.toContain(key);
  });
});
