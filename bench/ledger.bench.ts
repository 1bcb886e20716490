/**
 * bench:ledger — committed tool steps per second at 1, 8 and 64 concurrent runs on the real
 * PostgreSQL, beside the raw single-row INSERT … COMMIT rate at the same concurrency, measured in
 * the same run as the ceiling. Two kinds of call: an effect (the call with its write-ahead commit
 * stamp, then its observation: two commits) and a replayable query (the call and its observation
 * recorded together after it ran: one commit).
 *
 * The three are measured in turns, BENCH_SLICES (5) slices each of BENCH_SECONDS / slices: raw,
 * effect, query, raw, effect, query… The printed rates are the medians of their slices, and the
 * ratio is the median of each slice's rate over the raw rate measured just before it. Measured
 * once each, the raw rate moved by 2× between two runs on a busy box, and the ratio with it.
 */
import { randomUUID } from 'node:crypto';
import { RunLedger } from '../src/run/ledger.ts';
import { runStore } from '../src/store/run-store.ts';
import { insertAgent } from '../src/store/agents.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPostgres } from '../src/store/postgres.ts';
import type { Lease } from '../src/run/records.ts';
import { observation } from '../src/tool/observation.ts';
import { freshPostgresUrl } from '../test/support/postgres.ts';
import { percentile } from './stats.ts';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? '3');
const SLICES = Number(process.env['BENCH_SLICES'] ?? '5');
const LEVELS = [1, 8, 64];

if (!process.env['DATABASE_URL']) {
  console.error(
    'bench:ledger needs DATABASE_URL pointing at a PostgreSQL server (it creates its own database there)',
  );
  process.exit(2);
}

async function during(
  seconds: number,
  workers: number,
  op: (worker: number) => Promise<void>,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (performance.now() < deadline) {
        await op(w);
        count++;
      }
    }),
  );
  return count / seconds;
}

const fresh = await freshPostgresUrl();
const rows: string[] = [];
try {
  const setup = await openPostgres({ url: fresh.url });
  await migrate(setup);
  await setup.exec('create table bench_raw (id bigserial primary key, v text not null)');
  const agentId = randomUUID();
  await insertAgent(setup, { id: agentId, name: 'bench' });
  await setup.close();

  const effect = { class: 'effect', replay: 'effectful' } as const;
  const query = { class: 'query', replay: 'replayable' } as const;
  const result = observation({
    kind: 'result',
    text: 'posted: https://example.invalid/issues/216',
  });
  for (const concurrency of LEVELS) {
    const db: Db = await openPostgres({ url: fresh.url, max: concurrency });
    const warm = async () => {
      await Promise.all(Array.from({ length: concurrency }, () => db.query('select 1')));
    };
    await warm();
    const insertRaw = async () => {
      await db.query('insert into bench_raw (v) values ($1)', ['x'.repeat(64)]);
    };

    const ledger = new RunLedger(runStore(db));
    const leases: Lease[] = [];
    for (let i = 0; i < concurrency; i++) {
      const run = await ledger.createRun({
        agentId,
        kind: 'script',
        provenance: { kind: 'operator', operator: 'bench' },
        budget: {},
        lease: { owner: 'bench', leaseMs: 3_600_000 },
      });
      leases.push({ runId: run.id, owner: 'bench', epoch: run.leaseEpoch });
    }
    let n = 0;
    const effectStep = async (w: number) => {
      const lease = leases[w] as Lease;
      const id = `c${n++}`;
      const step = await ledger.recordToolCall(
        lease,
        { id, name: 'create_issue', arguments: '{"title":"bench"}' },
        effect,
      );
      await ledger.recordObservation(lease, step, result);
    };
    const queryStep = async (w: number) => {
      const lease = leases[w] as Lease;
      const id = `q${n++}`;
      const call = { id, name: 'recall', arguments: '{"query":"bench"}' };
      await ledger.recordSteps(
        lease,
        [{ kind: 'ran', call, definition: query, result, status: 'completed', startedMsAgo: 0 }],
        { toolCalls: n },
      );
    };
    // In turns: each slice of steps is set beside the raw slice measured just before it.
    const slice = SECONDS / SLICES;
    const rates = { raw: [] as number[], effect: [] as number[], query: [] as number[] };
    const ratios = { effect: [] as number[], query: [] as number[] };
    for (let i = 0; i < SLICES; i++) {
      const rawRate = await during(slice, concurrency, insertRaw);
      const effectRate = await during(slice, concurrency, effectStep);
      const queryRate = await during(slice, concurrency, queryStep);
      rates.raw.push(rawRate);
      rates.effect.push(effectRate);
      rates.query.push(queryRate);
      ratios.effect.push(effectRate / rawRate);
      ratios.query.push(queryRate / rawRate);
    }
    const median = (xs: number[]) => percentile([...xs], 50);
    const raw = median(rates.raw);
    const line = (label: string, steps: number[], ratio: number[]) =>
      `concurrency ${String(concurrency).padStart(2)}: ${label} ${median(steps).toFixed(0).padStart(6)} committed tool steps/s` +
      ` | raw INSERT…COMMIT ${raw.toFixed(0).padStart(6)} rows/s | ratio ${(median(ratio) * 100).toFixed(1)}%` +
      ` (slices ${ratio.map((r) => (r * 100).toFixed(0)).join(' ')})`;
    rows.push(
      line('effect', rates.effect, ratios.effect),
      line('query ', rates.query, ratios.query),
    );
    console.log(rows.slice(-2).join('\n'));
    await db.close();
  }
  console.log('');
  console.log(
    'An effect step is two durable commits: the call with its write-ahead stamp, then its observation.',
  );
  console.log(
    'A query step is one: a replayable query call and its observation (and the run usage), after it ran.',
  );
  console.log(
    `Medians of ${SLICES} slices measured in turns (raw, effect, query); each ratio is a slice's rate over the raw slice just before it.`,
  );
  console.log('Target: for query calls at 64 concurrent runs, at least 50% of the raw rate.');
} finally {
  await fresh.drop();
}
