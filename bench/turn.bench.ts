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
import type { Mesh } from '../src/app/mesh.ts';
import { assembleMesh } from '../src/app/compose.ts';
import { chat } from '../src/app/conversations/turns.ts';
import type { ModelClient } from '../src/model/client.ts';
import { parseScript, scriptedClient } from '../src/providers/scripted.ts';
import { insertAgent, setAgentBudgetRow } from '../src/store/agents.ts';
import type { Db, Queryable } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { insertModelProvider } from '../src/store/model-providers.ts';
import { openPglite } from '../src/store/pglite.ts';
import { openPostgres } from '../src/store/postgres.ts';
import { freshPostgresUrl } from '../test/support/postgres.ts';
import { percentile } from './stats.ts';

const TURNS = Number(process.env['BENCH_TURNS'] ?? '150');

/** A long run: nineteen tool rounds, then the answer (twenty model requests). */
const LONG_ROUNDS = 20;
const LONG_TURNS = Number(process.env['BENCH_LONG_TURNS'] ?? '15');

const script = parseScript({
  rules: [
    {
      match: 'long-run',
      rounds: [
        ...Array.from({ length: LONG_ROUNDS - 1 }, (_, i) => ({
          toolCalls: [{ name: 'recall', arguments: { query: `deploy window ${i}` } }],
        })),
        { content: 'Done.' },
      ],
    },
    {
      match: 'short-run',
      rounds: [
        { toolCalls: [{ name: 'recall', arguments: { query: 'deploy window' } }] },
        { content: 'Done.' },
      ],
    },
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

/** Statements the turns sent, by their first words, while `on`: count and time in the database. */
interface StatementLog {
  on: boolean;
  readonly byKind: Map<string, { count: number; ms: number; bytes: number }>;
  /** Round trips of the reads lane: its statements issued in one tick share one. */
  readsBatches: number;
}

/** Starts timing a new turn (the first model call of a turn has no round before it). */
let resetTurn = (): void => undefined;

/**
 * Long runs: the overhead per round of a 20-round run (19 tool rounds) beside a 1-tool-round
 * run's, in the same process and database, and the 20-round run's early rounds beside its late
 * ones: a round must not cost more for the rounds before it beyond what their context adds.
 */
async function longRuns(
  label: string,
  mesh: Mesh,
  db: Db,
  agentId: string,
  route: (sink: number[] | undefined) => void,
): Promise<void> {
  await setAgentBudgetRow(db, agentId, { maxRounds: LONG_ROUNDS, maxToolCalls: 40 });
  const run = async (body: string) => {
    resetTurn();
    const result = await chat(mesh, { agentId, actor: 'bench', body });
    if (result.status !== 'succeeded')
      throw new Error(`${body} ended ${result.status}: ${result.reason}`);
  };
  const short: number[] = [];
  const long: number[][] = [];
  for (let i = 0; i < LONG_TURNS + 2; i++) {
    const rounds: number[] = [];
    route(i < 2 ? [] : rounds); // two warm-up runs of each, not counted anywhere
    await run(`long-run ${i}`);
    if (i >= 2) long.push(rounds);
    const one: number[] = [];
    route(i < 2 ? [] : one);
    await run(`short-run ${i}`);
    if (i >= 2) short.push(...one);
  }
  route(undefined);
  await setAgentBudgetRow(db, agentId, {});
  const p50 = (xs: number[]) => percentile([...xs], 50);
  const all = long.flat();
  const early = long.flatMap((r) => r.slice(0, 5));
  const late = long.flatMap((r) => r.slice(-5));
  console.log(
    `${label.padEnd(10)} per round, ${LONG_ROUNDS}-round run p50 ${p50(all).toFixed(2)} ms (${all.length} rounds; its first five p50 ${p50(early).toFixed(2)} ms, its last five ${p50(late).toFixed(2)} ms)` +
      ` | 1-tool-round run p50 ${p50(short).toFixed(2)} ms (${short.length} rounds) | ratio ${(p50(all) / p50(short)).toFixed(2)}x`,
  );
}

/** The Db with every statement timed (the time from sending it to its answer). */
function timedDb(db: Db, log: StatementLog): Db {
  // A statement's kind: its first words, and the table it writes or reads first.
  // Named once per statement text (the texts are constant): the bench must not add to the time
  // it measures, and flattening a long append's text on every call was a visible share of a turn.
  const kinds = new Map<string, string>();
  const kindOf = (sql: string) => {
    const known = kinds.get(sql);
    if (known !== undefined) return known;
    const flat = sql.replace(/\s+/g, ' ').trim();
    const table = /\b(?:into|update|from)\s+([a-z_]+)/i.exec(flat)?.[1] ?? '';
    const kind = `${flat.split(' ').slice(0, 2).join(' ')} … ${table}`.slice(0, 48);
    kinds.set(sql, kind);
    return kind;
  };
  const time = <T>(sql: string, run: () => Promise<T>, params?: unknown): Promise<T> => {
    if (!log.on) return run();
    const t0 = performance.now();
    // The parameters' size without serializing them again (the ledger's are JSON text already):
    // the bench must not add to the time it measures.
    const bytes = Array.isArray(params)
      ? params.reduce<number>((n, p) => n + (typeof p === 'string' ? p.length : 8), 0)
      : 0;
    return run().finally(() => {
      const entry = log.byKind.get(kindOf(sql)) ?? { count: 0, ms: 0, bytes: 0 };
      entry.count++;
      entry.ms += performance.now() - t0;
      entry.bytes += bytes;
      log.byKind.set(kindOf(sql), entry);
    });
  };
  const wrap = (q: Queryable, lane = ''): Queryable => ({
    query: (sql, params) => time(lane + sql, () => q.query(sql, params), params),
    exec: (sql) => time(lane + sql, () => q.exec(sql)),
  });
  // The reads lane sends one tick's statements together (Db.reads): its statements are marked
  // ⇉, and each tick that used it is one round trip.
  let batchOpen = false;
  const readsLane = (q: Queryable): Queryable => {
    const inner = wrap(q, '⇉ ');
    const opened = () => {
      if (!log.on || batchOpen) return;
      batchOpen = true;
      log.readsBatches++;
      setImmediate(() => (batchOpen = false));
    };
    return {
      query: (sql, params) => (opened(), inner.query(sql, params)),
      exec: (sql) => (opened(), inner.exec(sql)),
    };
  };
  return {
    ...db,
    ...wrap(db),
    ...(db.leases ? { leases: wrap(db.leases) } : {}),
    ...(db.reads ? { reads: readsLane(db.reads) } : {}),
    transaction: (fn) => time('begin … commit', () => db.transaction((tx) => fn(wrap(tx)))),
    close: () => db.close(),
  };
}

async function measure(label: string, raw: Db): Promise<void> {
  await migrate(raw);
  const statements: StatementLog = { on: false, byKind: new Map(), readsBatches: 0 };
  const db = timedDb(raw, statements);
  const gaps: number[] = [];
  const inner = scriptedClient(script);
  let last = 0;
  let inTurn = false;
  // Where a round's overhead goes: the short turns' list, or a long run's (set by longRuns).
  let gapsFor: number[] | undefined;
  const timed: ModelClient = {
    kind: 'scripted',
    async complete(request, options) {
      const now = performance.now();
      if (inTurn && last !== 0) (gapsFor ?? gaps).push(now - last);
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

  resetTurn = () => {
    inTurn = false;
    last = 0;
  };
  for (let i = 0; i < TURNS + 10; i++) {
    inTurn = false;
    last = 0;
    if (i === 10) {
      gaps.length = 0; // warm-up turns are not counted
      statements.on = true;
    }
    const result = await chat(mesh, {
      agentId,
      actor: 'bench',
      body: `turn ${i}: what is the deploy window?`,
    });
    if (result.status !== 'succeeded')
      throw new Error(`turn ${i} ended ${result.status}: ${result.reason}`);
  }

  statements.on = false;
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
  await longRuns(label, mesh, db, agentId, (on) => {
    gapsFor = on;
  });
  console.log(
    `${label.padEnd(10)} tool round overhead p50 ${f(gaps, 50)} ms  p99 ${f(gaps, 99)} ms  (${gaps.length} rounds)` +
      ` | floor, two INSERT…COMMIT p50 ${f(floor, 50)} ms  p99 ${f(floor, 99)} ms` +
      ` | p50 ratio ${(percentile([...gaps], 50) / percentile([...floor], 50)).toFixed(1)}x`,
  );
  // Where a turn's database time goes: per turn of two tool rounds, by statement.
  const all = [...statements.byKind.entries()].sort((a, b) => b[1].ms - a[1].ms);
  const count = all.reduce((n, [, e]) => n + e.count, 0);
  const ms = all.reduce((n, [, e]) => n + e.ms, 0);
  const piped = all.filter(([kind]) => kind.startsWith('⇉')).reduce((n, [, e]) => n + e.count, 0);
  const trips = count - piped + statements.readsBatches;
  console.log(
    `${''.padEnd(10)} per turn (2 tool rounds, 3 model requests): ${(count / TURNS).toFixed(1)} statements in ${(trips / TURNS).toFixed(1)} round trips (⇉: ${(piped / TURNS).toFixed(1)} reads sent together, in ${(statements.readsBatches / TURNS).toFixed(1)}), ${(ms / TURNS).toFixed(2)} ms waiting on the database`,
  );
  for (const [kind, e] of all)
    console.log(
      `${''.padEnd(12)}${(e.count / TURNS).toFixed(1).padStart(4)} × ${kind.padEnd(48)} ${(e.ms / e.count).toFixed(3)} ms each, ${(e.bytes / e.count / 1024).toFixed(1)} KB of parameters`,
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
