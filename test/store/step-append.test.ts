import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunLedger } from '../../src/run/ledger.ts';
import type { StepRecord } from '../../src/run/records.ts';
import type { Db } from '../../src/store/db.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { runStore } from '../../src/store/run-store.ts';
import { LeaseLostError, updateProgress } from '../../src/store/runs.ts';
import { appendReply, appendSteps } from '../../src/store/step-append.ts';
import { effectKey } from '../../src/tool/outbound.ts';
import { testDatabases } from '../support/db.ts';
import { heldRun } from '../support/held-run.ts';
import { makeAgent } from '../support/run.ts';

const note = (text: string) => ({ step: { kind: 'note' as const, data: { text } } });
const noteText = (s: StepRecord) => (s.kind === 'note' ? JSON.stringify(s.data['text']) : s.kind);

describe.each(testDatabases())('a step append on $name', (database) => {
  let db: Db;
  let url: string | undefined;
  let dispose: () => Promise<void>;
  let ledger: RunLedger;
  let agentId: string;

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    url = opened.url;
    dispose = () => opened.dispose();
    ledger = new RunLedger(runStore(db));
    agentId = await makeAgent(db);
  });
  afterAll(() => dispose());

  /** A turn run of a new conversation, leased to this test (its worker). */
  const held = () => heldRun(ledger, agentId, { owner: 'holder' });
  /** The version of the run's row: a new one each time the row is rewritten. */
  const rowVersion = async (runId: string) =>
    (await db.query<{ v: string }>('select xmin::text as v from runs where id = $1', [runId]))
      .rows[0]?.v;
  const usageOf = async (runId: string) => (await ledger.run(runId))?.usage;

  it('leaves the run’s row as it was, and the run’s usage is the append’s', async () => {
    const { lease } = await held();
    const before = await rowVersion(lease.runId);
    const written = await appendSteps(db, lease, {
      steps: [note('one'), note('two')],
      usage: { toolCalls: 2 },
    });
    expect(written.map((s) => s.seq)).toEqual([1, 2]);
    expect(await rowVersion(lease.runId)).toBe(before);
    expect(await usageOf(lease.runId)).toEqual({ toolCalls: 2 });
    // An append without usage keeps the last one.
    await appendSteps(db, lease, { steps: [note('three')] });
    expect(await usageOf(lease.runId)).toEqual({ toolCalls: 2 });
  });

  it('reads the newest usage, whether an append or a direct write made it', async () => {
    const { lease } = await held();
    await appendSteps(db, lease, { steps: [note('a')], usage: { toolCalls: 1 } });
    await updateProgress(db, lease, { usage: { toolCalls: 5, parkedMs: 10 } });
    expect(await usageOf(lease.runId)).toEqual({ toolCalls: 5, parkedMs: 10 });
    // A checkpoint saved alone leaves the usage as it is.
    await updateProgress(db, lease, { checkpoint: { at: 1 } });
    expect(await usageOf(lease.runId)).toEqual({ toolCalls: 5, parkedMs: 10 });
    await appendSteps(db, lease, { steps: [note('b')], usage: { toolCalls: 6, parkedMs: 10 } });
    expect(await usageOf(lease.runId)).toEqual({ toolCalls: 6, parkedMs: 10 });
    // Its end keeps the usage on the run itself.
    await ledger.finish(lease, 'succeeded', null);
    const { rows } = await db.query<{ usage: unknown }>('select usage from runs where id = $1', [
      lease.runId,
    ]);
    expect(rows[0]?.usage).toEqual({ toolCalls: 6, parkedMs: 10 });
  });

  it('numbers appends of one run sent at once one after another, losing none', async () => {
    const { lease } = await held();
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => appendSteps(db, lease, { steps: [note(`n${i}`)] })),
    );
    const steps = await ledger.steps(lease.runId);
    expect(steps.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(steps.map(noteText)).size).toBe(8);
  });

  it('writes a reply, its step and its delivered event in one, keyed as the outbox keys it', async () => {
    const { lease, conversationId } = await held();
    await appendSteps(db, lease, { steps: [note('before')] });
    const messageId = randomUUID();
    const message = await appendReply(db, lease, {
      messageId,
      conversationId,
      actor: 'bench',
      body: 'Found it.',
      end: { status: 'failed', reason: 'out of budget' },
    });
    expect(message).toMatchObject({ id: messageId, direction: 'outbound', body: 'Found it.' });
    const steps = await ledger.steps(lease.runId);
    expect(steps.at(-1)).toMatchObject({ seq: 2, kind: 'reply' });
    const { rows } = await db.query<{ key: string; state: string; seq: number }>(
      `select idempotency_key as key, state, step_seq as seq from outbound_events where run_id = $1`,
      [lease.runId],
    );
    expect(rows).toEqual([
      { key: effectKey(lease.runId, 2, 'reply', 'reply').key, state: 'delivered', seq: 2 },
    ]);
  });

  it('writes no reply for a holder that lost the run', async () => {
    const { lease, conversationId } = await held();
    await db.query(`update runs set lease_epoch = lease_epoch + 1 where id = $1`, [lease.runId]);
    const messageId = randomUUID();
    await expect(
      appendReply(db, lease, { messageId, conversationId, actor: 'bench', body: 'late' }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const { rows } = await db.query('select 1 from messages where id = $1', [messageId]);
    expect(rows).toEqual([]);
    expect(await ledger.steps(lease.runId)).toEqual([]);
  });

  it('writes nothing for a holder whose lease was taken while its append waited', async () => {
    if (!url) return; // two connections at once: PostgreSQL only
    const { lease } = await held();
    await appendSteps(db, lease, { steps: [note('mine')] });
    const rival = await openPostgres({ url, max: 1 });
    try {
      let takenOver!: () => void;
      const taking = new Promise<void>((resolve) => (takenOver = resolve));
      let release!: () => void;
      const committed = new Promise<void>((resolve) => (release = resolve));
      // A takeover holds the run's row until the stale holder's append has been sent.
      const takeover = rival.transaction(async (tx) => {
        await tx.query(
          `update runs set lease_owner = 'rival', lease_epoch = lease_epoch + 1 where id = $1`,
          [lease.runId],
        );
        takenOver();
        await committed;
      });
      await taking;
      const stale = appendSteps(db, lease, { steps: [note('stale')] });
      // The append is waiting on the row the takeover holds (pg_locks shows the wait).
      for (;;) {
        const { rows } = await db.query<{ n: number }>(
          `select count(*)::int as n from pg_locks where locktype in ('tuple', 'transactionid') and not granted`,
        );
        if ((rows[0]?.n ?? 0) > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      release();
      await takeover;
      await expect(stale).rejects.toBeInstanceOf(LeaseLostError);
      const steps = await ledger.steps(lease.runId);
      expect(steps.map(noteText)).toEqual(['"mine"']);
    } finally {
      await rival.close();
    }
  });
});
