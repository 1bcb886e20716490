/**
 * bench:turn — control-plane overhead per tool round with a zero-latency scripted model, on PGlite
 * and (when DATABASE_URL is set) on the real PostgreSQL, p50 and p99, beside the floor: the two
 * commits a round needs (a single-row INSERT … COMMIT, twice), measured alone in the same run.
 *
 * A round's overhead is the time between two consecutive model calls of one turn: persisting the
 * response, the tool call (write-ahead) and its observation, running the tool (recall), building
 * the ledger, fitting the context (tokenizing), and persisting the next request.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { InstanceKey } from '../src/secrets/instance-key.ts';
import { assembleMesh, type Mesh } from '../src/app/mesh.ts';
import { chat } from '../src/app/turns.ts';
import type { ModelClient } from '../src/model/client.ts';
import { parseScript, scriptedClient } from '../src/providers/scripted.ts';
import { insertAgent } from '../src/store/agents.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { insertModelProvider } from '../src/store/model-providers.ts';
import { openPglite } from '../src/store/pglite.ts';
import { openPostgres } from '../src/store/postgres.ts';
import { freshPostgresUrl } from '../test/support/postgres.ts';
import { percentile } from './stats.ts';

const TURNS = Number(process.env['BENCH_TURNS'] ?? '150');

const script = parseScript({
  rules: [
    {
      match: '.*',
      rounds: [
        { toolCalls: [{ name: 'recall', arguments: { query: 'deploy window' } }] },
        {
          toolCalls: [{ name: 'remember', arguments: { content: 'the deploy window is Friday' } }],
        },
        { content: 'Done.' },
      ],
    },
  ],
});

async function measure(label: string, db: Db): Promise<void> {
  await migrate(db);
  const gaps: number[] = [];
  const inner = scriptedClient(script);
  let last = 0;
  let inTurn = false;
  const timed: ModelClient = {
    kind: 'scripted',
    async complete(request, options) {
      const now = performance.now();
      if (inTurn && last !== 0) gaps.push(now - last);
      inTurn = true;
      const response = await inner.complete(request, options);
      last = performance.now();
      return response;
    },
  };
  const base = assembleMesh(db, new InstanceKey(randomBytes(32)));
  const mesh: Mesh = { ...base, modelClientFor: () => timed };
  const provider = await insertModelProvider(db, {
    id: randomUUID(),
    name: 'bench',
    kind: 'openai_compatible',
    baseUrl: 'http://127.0.0.1:9/v1',
    script: null,
  });
  const agentId = randomUUID();
  await insertAgent(db, {
    id: agentId,
    name: 'bench',
    modelProviderId: provider.id,
    model: 'zero-latency',
  });

  for (let i = 0; i < TURNS + 10; i++) {
    inTurn = false;
    last = 0;
    if (i === 10) gaps.length = 0; // warm-up turns are not counted
    const result = await chat(mesh, {
      agentId,
      actor: 'bench',
      body: `turn ${i}: what is the deploy window?`,
    });
    if (result.status !== 'succeeded')
      throw new Error(`turn ${i} ended ${result.status}: ${result.reason}`);
  }

  await db.exec(
    'create table if not exists bench_floor (id bigserial primary key, v text not null)',
  );
  const floor: number[] = [];
  for (let i = 0; i < gaps.length + 20; i++) {
    const t0 = performance.now();
    await db.query('insert into bench_floor (v) values ($1)', ['x'.repeat(64)]);
    await db.query('insert into bench_floor (v) values ($1)', ['x'.repeat(64)]);
    if (i >= 20) floor.push(performance.now() - t0);
  }
  const f = (xs: number[], p: number) => percentile([...xs], p).toFixed(2);
  console.log(
    `${label.padEnd(10)} tool round overhead p50 ${f(gaps, 50)} ms  p99 ${f(gaps, 99)} ms  (${gaps.length} rounds)` +
      ` | floor, two INSERT…COMMIT p50 ${f(floor, 50)} ms  p99 ${f(floor, 99)} ms` +
      ` | p50 ratio ${(percentile([...gaps], 50) / percentile([...floor], 50)).toFixed(1)}x`,
  );
}

const pglite = await openPglite();
await measure('PGlite', pglite);
await pglite.close();

if (process.env['DATABASE_URL']) {
  const fresh = await freshPostgresUrl();
  try {
    const db = await openPostgres({ url: fresh.url });
    await measure('PostgreSQL', db);
    await db.close();
  } finally {
    await fresh.drop();
  }
} else {
  console.log(
    'PostgreSQL: skipped (set DATABASE_URL to a server; the bench creates its own database there)',
  );
}
