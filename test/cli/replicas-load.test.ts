import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshEnv, serveWith, type ServeProcess } from '../support/cli.ts';
import { freshPostgresUrl } from '../support/postgres.ts';

/*
 * Issue 18 item 5: two `mesh serve` replicas on one PostgreSQL take 200 concurrent messages, half
 * each. Every message is answered (no 5xx), every run ends, every message and its reply is stored
 * once, and no step is executed twice: each run holds exactly one `remember` call with one
 * observation, and the agent holds exactly the 200 memories those calls made.
 */
const MESSAGES = 200;

const SCRIPT = {
  rules: [
    {
      match: 'remember (.+)',
      rounds: [
        { toolCalls: [{ name: 'remember', arguments: { content: '$1' } }] },
        { content: 'Noted: $1.' },
      ],
    },
  ],
  fallback: { content: 'hello' },
};

describe.skipIf(!process.env['DATABASE_URL'])('two replicas under 200 concurrent messages', () => {
  let dir: string;
  let url: string;
  let drop: () => Promise<void>;
  const replicas: ServeProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mesh-replicas-'));
    const fresh = await freshPostgresUrl();
    drop = () => fresh.drop();
    url = fresh.url;
    writeFileSync(join(dir, 'instance.key'), randomBytes(32), { mode: 0o600 });
  });
  afterAll(async () => {
    for (const r of replicas) r.child.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(name: string): Promise<{ url: string; token?: string }> {
    // Each replica has its own home; they share the database and one instance key.
    const replica = serveWith(
      {
        ...meshEnv(join(dir, name)),
        DATABASE_URL: url,
        MESH_INSTANCE_KEY_FILE: join(dir, 'instance.key'),
      },
      '--port',
      '0',
    );
    replicas.push(replica);
    const at = (await replica.waitFor(/^URL: /)).slice('URL: '.length);
    const token = (await replica.waitFor(/^Operator token: /)).slice('Operator token: '.length);
    return { url: at, ...(token.startsWith('mesh_op_') ? { token } : {}) };
  }

  it('answers every message once, runs every turn once, and loses nothing', async () => {
    const [a, b] = await Promise.all([start('a'), start('b')]);
    const token = a.token ?? b.token ?? '';
    expect(token).toMatch(/^mesh_op_/);
    const api = async (base: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path.slice(1)}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };
    const provider = { name: 'script', kind: 'scripted', script: SCRIPT };
    expect((await api(a.url, 'POST', '/api/providers', provider)).status).toBe(201);
    const agent = { name: 'ada', provider: 'script', model: 'scripted' };
    expect((await api(b.url, 'POST', '/api/agents', agent)).status).toBe(201);

    const sent = await Promise.all(
      Array.from({ length: MESSAGES }, (_, i) =>
        api(i % 2 === 0 ? a.url : b.url, 'POST', '/api/agents/ada/messages?wait=60', {
          body: `remember item ${i}`,
        }),
      ),
    );
    const statuses = new Map<number, number>();
    for (const s of sent) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
    expect(Object.fromEntries(statuses)).toEqual({ 200: MESSAGES });
    expect(sent.map((s) => s.json['reply']).sort()).toEqual(
      Array.from({ length: MESSAGES }, (_, i) => `Noted: item ${i}.`).sort(),
    );

    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const runs = await admin.query<{ status: string; n: number }>(
        `select status, count(*)::int as n from runs group by status`,
      );
      expect(runs.rows).toEqual([{ status: 'succeeded', n: MESSAGES }]);
      const messages = await admin.query<{ direction: string; n: number }>(
        `select direction, count(*)::int as n from messages group by direction order by direction`,
      );
      expect(messages.rows).toEqual([
        { direction: 'inbound', n: MESSAGES },
        { direction: 'outbound', n: MESSAGES },
      ]);
      // Per run: one remember call, one observation of it, one reply.
      const perRun = await admin.query<{ calls: number; observations: number; replies: number }>(
        `select count(*) filter (where kind = 'tool_call')::int as calls,
                count(*) filter (where kind = 'observation')::int as observations,
                count(*) filter (where kind = 'reply')::int as replies
           from run_steps group by run_id`,
      );
      expect(perRun.rows).toHaveLength(MESSAGES);
      for (const row of perRun.rows) expect(row).toEqual({ calls: 1, observations: 1, replies: 1 });
      const memories = await admin.query<{ content: string }>(`select content from memories`);
      expect(memories.rows.map((m) => m.content).sort()).toEqual(
        Array.from({ length: MESSAGES }, (_, i) => `item ${i}`).sort(),
      );
    } finally {
      await admin.end();
    }
    // Neither replica logged an error.
    for (const r of replicas) expect(r.lines.filter((l) => /^error\b/i.test(l))).toEqual([]);
  }, 120_000);
});
