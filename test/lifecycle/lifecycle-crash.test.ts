import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent } from '../../src/store/agents.ts';
import { connect } from '../../src/store/connect.ts';
import type { Db } from '../../src/store/db.ts';
import { lifecycleStore } from '../../src/store/lifecycle.ts';
import { migrate } from '../../src/store/migrate.ts';
import { bundleChild } from '../crash/campaign.ts';
import { startLinearFake, type LinearFake } from '../support/linear-fake.ts';
import { freshPostgresUrl } from '../support/postgres.ts';
import { expectSerialized } from './serialized.ts';

const KEY = 'lin_api_lifecycleCrashKey0123456789';
const here = dirname(fileURLToPath(import.meta.url));

interface Child {
  readonly process: ChildProcess;
  /** Resolves when it printed READY (a racing child, its database open). */
  readonly ready: Promise<void>;
  /** Resolves when it exits: killed or not, and the JSON lines it printed. */
  readonly done: Promise<{ killed: boolean; lines: Record<string, unknown>[]; stderr: string }>;
}

/**
 * The lifecycle's promises where processes die and race: SIGKILL inside a hook after Linear acted
 * and before its answer (and its transition) were stored, and an enable and a disable racing on
 * one install from two processes.
 */
describe.each(
  [
    { name: 'pglite' as const },
    ...(process.env['DATABASE_URL'] ? [{ name: 'postgres' as const }] : []),
  ].filter(Boolean),
)('package lifecycle across processes on $name', ({ name }) => {
  let linear: LinearFake;
  let childPath: string;
  let home: string;
  let pg: Awaited<ReturnType<typeof freshPostgresUrl>> | undefined;
  let dbEnv: NodeJS.ProcessEnv;
  const open = (): Promise<Db> => connect(pg ? { databaseUrl: pg.url } : { meshHome: home });

  beforeAll(async () => {
    linear = await startLinearFake();
    linear.keys.add(KEY);
    childPath = await bundleChild(
      join(here, '..', '..', 'test-output'),
      join(here, 'lifecycle-child.ts'),
    );
    home = mkdtempSync(join(tmpdir(), 'mesh-lifecycle-crash-'));
    pg = name === 'postgres' ? await freshPostgresUrl() : undefined;
    dbEnv = pg ? { DATABASE_URL: pg.url } : { MESH_HOME: home, DATABASE_URL: '' };
    const db = await open();
    await migrate(db);
    await db.close();
  }, 60_000);
  afterAll(async () => {
    await linear?.close();
    await pg?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  const newAgent = async (): Promise<string> => {
    const db = await open();
    try {
      const id = randomUUID();
      await insertAgent(db, { id, name: `crash-${id.slice(0, 8)}` });
      return id;
    } finally {
      await db.close();
    }
  };

  const start = (env: Record<string, string>): Child => {
    const child = spawn(process.execPath, [childPath], {
      env: { ...process.env, ...dbEnv, LINEAR_URL: linear.url, LINEAR_KEY: KEY, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // Only a racing child reads its standard input (for its go).
    if (env['BARRIER'] !== '1') child.stdin?.end();
    let stdout = '';
    let stderr = '';
    let isReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (isReady = resolve));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('READY\n')) isReady();
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const done = new Promise<{ killed: boolean; lines: Record<string, unknown>[]; stderr: string }>(
      (resolve) =>
        child.on('exit', (_code, signal) =>
          resolve({
            killed: signal === 'SIGKILL',
            lines: stdout
              .split('\n')
              .filter((l) => l.startsWith('{'))
              .map((l) => JSON.parse(l) as Record<string, unknown>),
            stderr,
          }),
        ),
    );
    return { process: child, ready, done };
  };

  /** Runs a child to its end and returns its one line. */
  const run = async (env: Record<string, string>) => {
    const outcome = await start(env).done;
    expect(outcome.stderr).toBe('');
    expect(outcome.killed).toBe(false);
    return outcome.lines;
  };

  /** Runs a child that Linear's fake kills right after applying `field`, before answering. */
  const killedAfter = async (field: string, env: Record<string, string>) => {
    const child = start(env);
    linear.afterApply = (applied) => {
      if (applied === field) child.process.kill('SIGKILL');
    };
    const outcome = await child.done;
    linear.afterApply = undefined;
    expect(outcome.killed).toBe(true);
    expect(outcome.lines).toEqual([]);
  };

  const installOf = async (agentId: string) => {
    const db = await open();
    try {
      const store = lifecycleStore(db);
      const install = await store.findInstall(agentId, 'mesh.linear');
      if (!install) throw new Error('no install');
      return {
        install,
        history: await store.history(install.id),
        compensations: await store.compensations(install.id),
      };
    } finally {
      await db.close();
    }
  };

  it('makes one webhook, not two, when killed inside on_enable after Linear made it; and removes it the same way', async () => {
    linear.reset();
    const agentId = await newAgent();
    await killedAfter('webhookCreate', { AGENT_ID: agentId, ACTION: 'enable' });
    expect(linear.webhooks.size).toBe(1);
    const cut = await installOf(agentId);
    expect(cut.install.state).toBe('enabling');
    expect(cut.history).toMatchObject([{ seq: 1, outcome: 'running', attempts: 1 }]);

    // The next process resumes the cut transition with the same key: it finds the webhook.
    expect(await run({ AGENT_ID: agentId, ACTION: 'resume' })).toEqual([{ resumed: 1 }]);
    expect(linear.webhooks.size).toBe(1);
    const [made] = [...linear.webhooks.keys()];
    expect(linear.createRequests.get(made ?? '')).toBe(1);
    const resumed = await installOf(agentId);
    expect(resumed.install).toMatchObject({ state: 'enabled', hookState: { webhook_id: made } });
    expect(resumed.history).toMatchObject([
      { seq: 1, action: 'enable', outcome: 'succeeded', attempts: 2 },
    ]);

    // Killed inside on_disable after Linear deleted it: the resumed teardown finds nothing left.
    await killedAfter('webhookDelete', { AGENT_ID: agentId, ACTION: 'disable' });
    expect(linear.webhooks.size).toBe(0);
    expect((await installOf(agentId)).install.state).toBe('disabling');
    // A new request resumes what was cut before doing anything else.
    expect(await run({ AGENT_ID: agentId, ACTION: 'disable' })).toEqual([
      { state: 'disabled', outcome: null },
    ]);
    const disabled = await installOf(agentId);
    expect(disabled.install).toMatchObject({ state: 'disabled', hookState: {} });
    expect(disabled.history.map((t) => [t.action, t.outcome, t.attempts])).toEqual([
      ['enable', 'succeeded', 2],
      ['disable', 'succeeded', 2],
    ]);
  }, 120_000);

  it('parks a failed teardown in error with a compensation task; retrying it removes the webhook', async () => {
    linear.reset();
    const agentId = await newAgent();
    expect(await run({ AGENT_ID: agentId, ACTION: 'enable' })).toEqual([
      { state: 'enabled', outcome: 'succeeded' },
    ]);
    linear.failures.push('forbidden');
    expect(await run({ AGENT_ID: agentId, ACTION: 'disable' })).toEqual([
      { state: 'error', outcome: 'failed' },
    ]);
    expect(linear.webhooks.size).toBe(1);
    const parked = await installOf(agentId);
    expect(parked.compensations).toMatchObject([{ action: 'disable', state: 'open' }]);
    expect(parked.compensations[0]?.reason).toContain('forbidden');

    expect(await run({ AGENT_ID: agentId, ACTION: 'retry', ACTOR: 'operator:bo' })).toEqual([
      { state: 'disabled', outcome: 'succeeded' },
    ]);
    expect(linear.webhooks.size).toBe(0);
    const settled = await installOf(agentId);
    expect(settled.compensations).toMatchObject([{ state: 'retried', resolvedBy: 'operator:bo' }]);
  }, 120_000);

  it.skipIf(name !== 'postgres')(
    'serializes an enable and a disable racing on one install from two processes',
    async () => {
      linear.reset();
      const agentId = await newAgent();
      const rounds = '6';
      // Both open the database first; then both are told to go at once.
      const together = { AGENT_ID: agentId, REPEAT: rounds, BARRIER: '1' };
      const children = [
        start({ ...together, ACTION: 'enable', ACTOR: 'operator:en' }),
        start({ ...together, ACTION: 'disable', ACTOR: 'operator:dis' }),
      ];
      await Promise.all(children.map((c) => c.ready));
      for (const c of children) c.process.stdin?.end('GO\n');
      const [enabler, disabler] = await Promise.all(children.map((c) => c.done));
      if (!enabler || !disabler) throw new Error('a racing child is missing');
      expect(enabler.stderr + disabler.stderr).toBe('');
      expect(enabler.lines).toHaveLength(6);
      expect(disabler.lines).toHaveLength(6);
      expect([...enabler.lines, ...disabler.lines].filter((l) => 'error' in l)).toEqual([]);

      const { install, history } = await installOf(agentId);
      console.log(
        `race: ${history.map((t) => `${t.seq}.${t.action}(${t.requestedBy.slice(9)})→${t.outcome === 'succeeded' ? t.toState : 'error'}`).join(' ')}`,
      );
      expectSerialized(history);
      expect(history.length).toBeGreaterThan(2);
      // Both processes took turns: each moved the install at least once.
      expect(new Set(history.map((t) => t.requestedBy))).toEqual(
        new Set(['operator:en', 'operator:dis']),
      );
      expect(history.at(-1)?.toState).toBe(install.state);
      if (install.state === 'enabled') {
        expect([...linear.webhooks.keys()]).toEqual([install.hookState['webhook_id']]);
      } else {
        expect(install.state).toBe('disabled');
        expect(linear.webhooks.size).toBe(0);
      }
      // Every enable made its own webhook once, and every disable removed the one before it.
      const enables = history.filter((t) => t.action === 'enable').length;
      expect([...linear.createRequests.values()].every((n) => n === 1)).toBe(true);
      expect(linear.createRequests.size).toBe(enables);
    },
    120_000,
  );
});
