import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunQueue } from '../../src/run/run-queue.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import { runStore } from '../../src/store/run-store.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { RUN_ENDED_CHANNEL } from '../../src/store/runs.ts';
import type { Db } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';
import { heldRun } from '../support/held-run.ts';
import { scriptedAgent } from '../support/turn.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { testInstanceKey } from '../support/turn.ts';

const postgres = testDatabases().filter((d) => d.name === 'postgres');

/*
 * Two processes on one PostgreSQL: a run ended through one connection is announced (NOTIFY when
 * the end commits), and a waiter on another connection wakes on it, not on its next read.
 */
describe.skipIf(postgres.length === 0)('run ends announced across connections', () => {
  let mesh: Mesh;
  let other: Db;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const database = postgres[0];
    if (!database) return;
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey());
    other = await openPostgres({ url: opened.url ?? '' });
  }, 60_000);
  afterAll(async () => {
    await mesh?.runs.close();
    await other?.close();
    await dispose?.();
  });

  it('wakes a waiter in another process when the run ends there', async () => {
    const agentId = await scriptedAgent(mesh, { rules: [], fallback: { content: 'Hi.' } }, 'ada');
    // The "other replica": its own connection and ledger, holding the run's lease.
    const ledger = new RunLedger(runStore(other));
    const { lease } = await heldRun(ledger, agentId, { owner: 'replica-b' });

    // A waiter whose reads are an hour apart: only the announcement can wake it in time.
    const { listen } = mesh.db;
    if (!listen) throw new Error('a PostgreSQL Db listens');
    let reads = 0;
    const queue = new RunQueue(
      (id) => {
        reads++;
        return mesh.ledger.run(id);
      },
      3_600_000,
      (ended, lost) => listen(RUN_ENDED_CHANNEL, ended, lost),
    );
    try {
      const waiting = queue.settled(lease.runId, Number.POSITIVE_INFINITY);
      // The end is sent once the waiter hears announcements (LISTEN has run).
      await expect(queue.listening()).resolves.toBe(true);
      await ledger.finish(lease, 'succeeded', null);
      expect((await waiting)?.status).toBe('succeeded');
      expect(reads).toBe(2);
    } finally {
      await queue.close();
    }
  });
});
