/**
 * The crash campaign: scripted runs whose effects hit a counting HTTP server on loopback, driven
 * by child worker processes that are killed with SIGKILL at injected points (or at a random
 * moment), then resumed by the next child. Afterwards the counter and the ledger are compared.
 */
import { spawn } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunLedger } from '../../src/run/ledger.ts';
import { runStore } from '../../src/store/run-store.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import type { CallPoint } from '../../src/run/tool-step.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { connect } from '../../src/store/connect.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { freshPostgresUrl } from '../support/postgres.ts';
import { crashScript } from './tools.ts';

export interface CampaignOptions {
  readonly database: 'pglite' | 'postgres';
  /** Runs created at the start. */
  readonly runs: number;
  /** Keep adding runs until at least this many children were killed. */
  readonly minKills: number;
  /** Kill no more children than this: later ones run to the end (a short smoke run). */
  readonly maxKills?: number;
  readonly seed?: number;
  /**
   * On the embedded database: a MESH_HOME whose database is already initialised and migrated
   * (the suite's template), copied instead of running initdb, which takes seconds.
   */
  readonly homeTemplate?: string;
  readonly log?: (line: string) => void;
}

export interface CampaignResult {
  readonly runs: number;
  readonly kills: number;
  readonly duplicateEffects: number;
  readonly lostSteps: number;
  readonly unknownReported: number;
  /** Calls killed after their commit stamp and before their observation that were not reported unknown. */
  readonly unreportedInterruptions: number;
  readonly unfinishedRuns: number;
  readonly problems: readonly string[];
  /** The seed the campaign ran with: `npm run test:crash -- --seed S` replays it. */
  readonly seed: number;
}

const POINTS: readonly CallPoint[] = [
  'before_record',
  'after_record',
  'after_execute',
  'after_observation',
];
const childSource = join(dirname(fileURLToPath(import.meta.url)), 'child.ts');

/**
 * Bundles the child once per campaign: a plain .mjs starts in a fraction of the time a TypeScript
 * loader needs, and hundreds of children are started. Packages stay external (the real pg, PGlite).
 */
export async function bundleChild(outDir: string, entry = childSource): Promise<string> {
  const { build } = await import('esbuild');
  const outfile = join(
    outDir,
    entry === childSource ? 'crash-child.mjs' : `crash-${basename(entry, '.ts')}.mjs`,
  );
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'silent',
  });
  return outfile;
}

/** A small deterministic generator, so a failing campaign can be replayed from its seed. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function startCounter(): Promise<{
  server: Server;
  url: string;
  effects: Map<string, number>;
}> {
  const effects = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/effect') {
        const { key } = JSON.parse(body) as { key: string };
        effects.set(key, (effects.get(key) ?? 0) + 1);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('counter has no address');
  return { server, url: `http://127.0.0.1:${address.port}`, effects };
}

export interface ChildOutcome {
  readonly killed: boolean;
  readonly killedAt?: { point: CallPoint; callId: string };
  readonly stderr: string;
}

export function runChild(
  childPath: string,
  env: NodeJS.ProcessEnv,
  timerKillMs: number | undefined,
): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [childPath], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (timerKillMs !== undefined && timer === undefined && stdout.includes('READY')) {
        timer = setTimeout(() => child.kill('SIGKILL'), timerKillMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (_code, signal) => {
      if (timer) clearTimeout(timer);
      const match = /KILL (\S+) (\S+)/.exec(stdout);
      resolve({
        killed: signal === 'SIGKILL',
        ...(match ? { killedAt: { point: match[1] as CallPoint, callId: match[2] ?? '' } } : {}),
        stderr,
      });
    });
  });
}

async function createRuns(db: Db, agentId: string, from: number, count: number): Promise<void> {
  const ledger = new RunLedger(runStore(db));
  for (let i = from; i < from + count; i++) {
    await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'crash-test' },
      budget: { maxToolCalls: 10 },
      checkpoint: scriptCheckpoint(crashScript(i)),
    });
  }
}

/** Runs the campaign and checks the counter against the ledger. */
export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const seed = options.seed ?? randomInt(2 ** 31);
  options.log?.(`crash: seed=${seed}`);
  const next = random(seed);
  const counter = await startCounter();
  const home = mkdtempSync(join(tmpdir(), 'mesh-crash-'));
  if (options.homeTemplate !== undefined && options.database === 'pglite')
    cpSync(options.homeTemplate, home, { recursive: true });
  // Bundled beside the sources so that bare imports resolve to this project's node_modules.
  const childPath = await bundleChild(join(dirname(childSource), '..', '..', 'test-output'));
  const pgFresh = options.database === 'postgres' ? await freshPostgresUrl() : undefined;
  const dbEnv: NodeJS.ProcessEnv = pgFresh
    ? { DATABASE_URL: pgFresh.url }
    : { MESH_HOME: home, DATABASE_URL: '' };
  // Each open in this process does one step (create runs, or verify) and closes again.
  const open = () =>
    connect(pgFresh ? { databaseUrl: pgFresh.url } : { meshHome: home, oneShot: true });

  const agentId = randomUUID();
  let db = await open();
  await migrate(db);
  await insertAgent(db, { id: agentId, name: 'crash-agent' });
  await createRuns(db, agentId, 0, options.runs);
  let runs = options.runs;
  // The embedded database is single-process: the parent lets go while a child works.
  if (!pgFresh) await db.close();

  const interrupted: { point: CallPoint; callId: string }[] = [];
  let kills = 0;
  let done = false;
  const problems: string[] = [];
  // Several workers at once on a server (the production shape); one on the embedded database.
  const parallel = pgFresh ? 3 : 1;
  const slot = async (): Promise<void> => {
    while (!done) {
      const killing = kills < (options.maxKills ?? Number.POSITIVE_INFINITY);
      const timerKill = killing && next() < 0.25;
      const point = POINTS[Math.floor(next() * POINTS.length)] ?? 'after_record';
      const spawnedAt = Date.now();
      const outcome = await runChild(
        childPath,
        {
          ...dbEnv,
          COUNTER_URL: counter.url,
          LEASE_MS: '300',
          ...(timerKill || !killing
            ? {}
            : { KILL_POINT: point, KILL_NTH: String(1 + Math.floor(next() * 6)) }),
        },
        timerKill ? 100 + Math.floor(next() * 600) : undefined,
      );
      if (outcome.killed) {
        kills++;
        if (outcome.killedAt) interrupted.push(outcome.killedAt);
        options.log?.(
          `kill ${kills}: ${outcome.killedAt ? `${outcome.killedAt.point} ${outcome.killedAt.callId}` : 'timer'} after ${Date.now() - spawnedAt} ms`,
        );
        continue;
      }
      if (outcome.stderr.trim() !== '') {
        problems.push(`child failed: ${outcome.stderr.trim().split('\n').slice(-3).join(' | ')}`);
        if (problems.length > 3) done = true;
      }
      // The child finished every run; add more until enough kills were made.
      if (kills >= options.minKills) {
        done = true;
        break;
      }
      if (!pgFresh) db = await open();
      const more = Math.max(4, Math.ceil((options.minKills - kills) * 0.9));
      const from = runs;
      runs += more;
      await createRuns(db, agentId, from, more);
      if (!pgFresh) await db.close();
    }
  };
  try {
    await Promise.all(Array.from({ length: parallel }, slot));
    // A slot may have added runs and had its child killed in them after another slot decided the
    // campaign was done: one more child, never killed, drives what is left to its end (as any
    // worker would in production) before the record is read.
    const last = await runChild(
      childPath,
      { ...dbEnv, COUNTER_URL: counter.url, LEASE_MS: '300' },
      undefined,
    );
    if (last.stderr.trim() !== '')
      problems.push(`child failed: ${last.stderr.trim().split('\n').slice(-3).join(' | ')}`);

    if (!pgFresh) db = await open();
    return {
      runs,
      kills,
      ...(await verify(db, counter.effects, interrupted)),
      problems: [...problems],
      seed,
    };
  } finally {
    await db.close().catch(() => undefined);
    counter.server.close();
    await pgFresh?.drop();
    // Unlinked in parallel: rmSync removes a data directory's thousand-odd files one at a time.
    await rm(home, { recursive: true, force: true });
  }
}

interface StepRow {
  run_id: string;
  seq: number;
  kind: string;
  call_id: string | null;
  tool_name: string | null;
  status: string;
  committed_at: Date | null;
  observation: { kind?: string } | null;
}

async function verify(
  db: Db,
  effects: Map<string, number>,
  interrupted: readonly { point: CallPoint; callId: string }[],
): Promise<Omit<CampaignResult, 'runs' | 'kills' | 'problems' | 'seed'>> {
  const runs = (
    await db.query<{
      id: string;
      status: string;
      checkpoint: { calls: { id: string; name: string }[] };
    }>('select id, status, checkpoint from runs')
  ).rows;
  const steps = (
    await db.query<StepRow>(
      'select run_id, seq, kind, call_id, tool_name, status, committed_at, observation from run_steps order by run_id, seq',
    )
  ).rows;
  const byRun = new Map<string, StepRow[]>();
  for (const s of steps) byRun.set(s.run_id, [...(byRun.get(s.run_id) ?? []), s]);

  let duplicateEffects = 0;
  for (const count of effects.values()) duplicateEffects += Math.max(0, count - 1);

  let lostSteps = 0;
  let unknownReported = 0;
  let unfinishedRuns = 0;
  const observationKind = new Map<string, string>();
  for (const run of runs) {
    if (run.status !== 'succeeded') unfinishedRuns++;
    const own = byRun.get(run.id) ?? [];
    own.forEach((s, i) => {
      if (s.seq !== i + 1) lostSteps++;
    });
    for (const call of run.checkpoint.calls) {
      const calls = own.filter((s) => s.call_id === call.id && s.kind === 'tool_call');
      const observations = own.filter((s) => s.call_id === call.id && s.kind === 'observation');
      if (calls.length !== 1) lostSteps += Math.abs(1 - calls.length);
      if (observations.length !== 1) lostSteps += Math.abs(1 - observations.length);
      const kind = observations[0]?.observation?.kind ?? 'missing';
      observationKind.set(call.id, kind);
      if (kind === 'unknown_outcome') unknownReported++;
      const key = `${run.id}/${call.id}`;
      if (call.name === 'post_effect') {
        const delivered = effects.get(key) ?? 0;
        // An effect that happened must have been stamped before it ran.
        if (delivered > 0 && !calls[0]?.committed_at) lostSteps++;
        // A reported result must match the world: exactly one delivery.
        if (kind === 'result' && delivered !== 1) lostSteps++;
      } else if (kind === 'unknown_outcome') {
        // A replayable call is re-run, never reported unknown.
        lostSteps++;
      }
    }
  }
  let unreportedInterruptions = 0;
  for (const cut of interrupted) {
    const isEffect = /c[13]$/.test(cut.callId);
    if (isEffect && (cut.point === 'after_record' || cut.point === 'after_execute')) {
      if (observationKind.get(cut.callId) !== 'unknown_outcome') unreportedInterruptions++;
    }
  }
  return { duplicateEffects, lostSteps, unknownReported, unreportedInterruptions, unfinishedRuns };
}

/** The one line the campaign ends with. */
export function summaryLine(result: CampaignResult): string {
  return `crash: seed=${result.seed} runs=${result.runs} kills=${result.kills} duplicate_effects=${result.duplicateEffects} lost_steps=${result.lostSteps} unknown_reported=${result.unknownReported}`;
}
