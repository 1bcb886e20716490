import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { outboxService } from '../../src/app/runs/outbound-service.ts';
import { createOutbox, outboundEvent } from '../../src/outbound/outbox.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import type { Db } from '../../src/store/db.ts';
import { outboundStore } from '../../src/store/outbound-events.ts';
import { runStore } from '../../src/store/run-store.ts';
import { systemClock } from '../../src/tool/clock.ts';
import { services, type ToolContext } from '../../src/tool/context.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import {
  DeliveryError,
  effectKey,
  type Effect,
  type EffectKey,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import { testDatabases } from '../support/db.ts';
import { makeAgent } from '../support/run.ts';

/** A provider in memory: what it was sent, and what each attempt answers. */
function provider(answers: readonly (Error | 'ok')[] = [], lookups = true) {
  const sent: string[] = [];
  const made = new Map<string, EffectReceipt>();
  let n = 0;
  const effect: Effect = {
    name: 'post',
    kind: 'test.post',
    target: 'channel #ops',
    payload: { text: 'hello' },
    async send(key) {
      const answer = answers[n++] ?? 'ok';
      sent.push(key.uuid);
      if (answer !== 'ok') throw answer;
      const receipt = { externalId: `x-${sent.length}`, link: `https://example.test/${key.uuid}` };
      made.set(key.uuid, receipt);
      return receipt;
    },
    ...(lookups ? { lookup: async (key) => made.get(key.uuid) } : {}),
  };
  return { effect, sent, made };
}

describe.each(testDatabases())('the outbound machinery on $name', (database) => {
  let db: Db;
  let close: () => Promise<void> = () => Promise.resolve();
  let runId: string;
  const delays: number[] = [];
  const sleep = async (ms: number) => {
    delays.push(ms);
  };

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    close = () => opened.dispose();
    const agentId = await makeAgent(db);
    const run = await new RunLedger(runStore(db)).createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { maxToolCalls: 10 },
      checkpoint: scriptCheckpoint([]),
    });
    runId = run.id;
  });
  afterAll(() => close());

  const ctxFor = (callId = randomUUID(), step = 1): ToolContext => ({
    agentId: 'a',
    runId,
    callId,
    step,
    toolName: 'post_it',
    provenance: { kind: 'operator', operator: 'test' },
    signal: new AbortController().signal,
    services: services([]),
    config: {},
    secret: () => Promise.reject(new Error('no secrets here')),
    fetch: () => Promise.reject(new Error('no HTTP here')),
  });

  /** What the machinery records for `effect` of the call `ctx` (step 1), under `key`. */
  const recordOf = (ctx: ToolContext, effect: Effect, key: EffectKey) =>
    outboundEvent(ctx, 1, effect, key);

  it('records the effect, sends it once, and a second call finds it delivered', async () => {
    const store = outboundStore(db);
    const outbox = createOutbox({ store, sleep });
    const { effect, sent } = provider();
    const ctx = ctxFor();
    const first = await outbox.deliver(ctx, effect);
    expect(first).toMatchObject({ state: 'delivered', attempts: 1, settledEarlier: false });
    const again = await outbox.deliver(ctx, effect);
    expect(again).toMatchObject({ state: 'delivered', settledEarlier: true });
    expect(sent).toHaveLength(1);
    const [row] = (await store.forRun(runId)).filter((r) => r.callId === ctx.callId);
    expect(row).toMatchObject({
      state: 'delivered',
      attempts: 1,
      externalId: 'x-1',
      target: 'channel #ops',
      kind: 'test.post',
      reconciles: true,
    });
    expect(row?.idempotencyKey).toBe(effectKey(runId, 1, ctx.callId, 'post').key);
  });

  it('keys the same call id in another step as another effect', () => {
    const a = effectKey(runId, 1, 'call_0', 'post');
    const b = effectKey(runId, 5, 'call_0', 'post');
    expect(a.key).not.toBe(b.key);
    expect(a.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('retries a retryable failure with backoff, honouring the provider’s wait', async () => {
    delays.length = 0;
    // The jitter pinned to its ceiling: 250 ms doubling per retry, unless the provider asks.
    const outbox = createOutbox({ store: outboundStore(db), sleep, random: () => 1 });
    const { effect, sent } = provider([
      new DeliveryError('retryable', 'rate limited', { retryAfterMs: 1500 }),
      new DeliveryError('retryable', 'unavailable'),
    ]);
    const delivery = await outbox.deliver(ctxFor(), effect);
    expect(delivery).toMatchObject({ state: 'delivered', attempts: 3 });
    expect(sent).toHaveLength(3);
    expect(delays).toEqual([1500, 500]);
  });

  it('gives up after the last attempt, and a terminal failure is not retried', async () => {
    const outbox = createOutbox({
      store: outboundStore(db),
      sleep,
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 10 },
    });
    const busy = provider([
      new DeliveryError('retryable', 'busy'),
      new DeliveryError('retryable', 'busy'),
    ]);
    expect(await outbox.deliver(ctxFor(), busy.effect)).toMatchObject({
      state: 'failed',
      attempts: 2,
      error: 'busy (gave up after 2 attempts)',
    });
    const refused = provider([new DeliveryError('terminal', 'the credential was refused')]);
    expect(await outbox.deliver(ctxFor(), refused.effect)).toEqual({
      state: 'failed',
      attempts: 1,
      error: 'the credential was refused',
    });
    expect(refused.sent).toHaveLength(1);
  });

  it('keeps no held secret in what a failed attempt stored, whatever the vendor quoted', async () => {
    const secret = 'xoxb-outbound-canary-4242';
    const outbox = outboxService.create({
      db,
      clock: systemClock,
      redactor: createRedactor([secret]),
    });
    const quoting = provider([
      new DeliveryError('retryable', `busy (token=${encodeURIComponent(secret)})`),
      new DeliveryError('terminal', `invalid_auth: ${Buffer.from(secret).toString('base64')}`),
    ]);
    const ctx = { ...ctxFor(), services: services([]) };
    const outcome = await outbox.deliver(ctx, quoting.effect);
    expect(outcome).toMatchObject({ state: 'failed' });
    const [row] = (await outboundStore(db).forRun(runId)).filter((r) => r.callId === ctx.callId);
    expect(row?.lastError).toMatch(/^invalid_auth: \[redacted\]/);
    expect(JSON.stringify(row)).not.toContain(secret);
  });

  it('an ambiguous failure is reconciled by lookup, or reported unknown without one', async () => {
    const outbox = createOutbox({ store: outboundStore(db), sleep });
    // The first attempt reached the provider but its answer was lost.
    const lost = provider([new DeliveryError('ambiguous', 'connection reset')]);
    const lostSend = lost.effect.send.bind(lost.effect);
    const reconciling: Effect = {
      ...lost.effect,
      async send(key) {
        try {
          return await lostSend(key);
        } catch (error) {
          lost.made.set(key.uuid, { externalId: 'made-anyway' });
          throw error;
        }
      },
    };
    expect(await outbox.deliver(ctxFor(), reconciling)).toMatchObject({
      state: 'delivered',
      receipt: { externalId: 'made-anyway' },
    });
    expect(lost.sent).toHaveLength(1);

    const blind = provider([new DeliveryError('ambiguous', 'connection reset')], false);
    const unknown = await outbox.deliver(ctxFor(), blind.effect);
    expect(unknown.state).toBe('unknown');
    expect(blind.sent).toHaveLength(1);
  });

  it('settles an attempt a crashed holder left: reconciled where the provider can say, else unknown', async () => {
    const store = outboundStore(db);
    const outbox = createOutbox({ store, sleep });
    const leaveDelivering = async (ctx: ToolContext, effect: Effect) => {
      const key = effectKey(runId, 1, ctx.callId, effect.name);
      const { row, begun } = await store.record(recordOf(ctx, effect, key));
      // Recorded with its first attempt begun: one commit before the send, not two.
      expect(begun).toBe(true);
      expect(row).toMatchObject({ state: 'delivering', attempts: 1 });
      // A second holder that read the row before that attempt began cannot begin one of its own.
      expect(await store.beginAttempt(row.id, 0)).toBeUndefined();
      // Recording it again finds it, and begins nothing.
      const again = await store.record({ ...recordOf(ctx, effect, key), id: randomUUID() });
      expect(again).toMatchObject({ begun: false, row: { id: row.id, attempts: 1 } });
      return key;
    };

    // It was sent before the crash: found by our key, not sent again.
    const found = provider();
    const ctxA = ctxFor();
    const keyA = await leaveDelivering(ctxA, found.effect);
    found.made.set(keyA.uuid, { externalId: 'from-before' });
    expect(await outbox.deliver(ctxA, found.effect)).toMatchObject({
      state: 'delivered',
      receipt: { externalId: 'from-before' },
      settledEarlier: true,
    });
    expect(found.sent).toHaveLength(0);

    // It never left: the lookup finds nothing, so it is sent now, once.
    const notSent = provider();
    const ctxB = ctxFor();
    await leaveDelivering(ctxB, notSent.effect);
    expect(await outbox.deliver(ctxB, notSent.effect)).toMatchObject({
      state: 'delivered',
      attempts: 2,
    });
    expect(notSent.sent).toHaveLength(1);

    // A provider that cannot be asked: unknown, never re-sent, and it stays unknown.
    const blind = provider([], false);
    const ctxC = ctxFor();
    await leaveDelivering(ctxC, blind.effect);
    expect((await outbox.deliver(ctxC, blind.effect)).state).toBe('unknown');
    expect((await outbox.deliver(ctxC, blind.effect)).state).toBe('unknown');
    expect(blind.sent).toHaveLength(0);
    const [row] = (await store.forRun(runId)).filter((r) => r.callId === ctxC.callId);
    expect(row).toMatchObject({ state: 'unknown', attempts: 1, reconciles: false });

    // A lookup that itself fails tells nothing: unknown, and nothing is sent.
    const unanswered = provider();
    const failing: Effect = {
      ...unanswered.effect,
      lookup: () => Promise.reject(new Error('provider down')),
    };
    const ctxD = ctxFor();
    await leaveDelivering(ctxD, failing);
    const settled = await outbox.deliver(ctxD, failing);
    expect(settled.state).toBe('unknown');
    expect(settled.state === 'unknown' ? settled.error : '').toContain('asking the provider');
    expect(unanswered.sent).toHaveLength(0);
  });
  it('begins no attempt once its holder has stopped, and settles a contended one the provider shows', async () => {
    const store = outboundStore(db);
    const outbox = createOutbox({ store, sleep });

    // The run's lease lapsed while the call waited: nothing is recorded, begun or sent.
    const stopped = provider();
    const controller = new AbortController();
    const ctxA = { ...ctxFor(), signal: controller.signal };
    controller.abort(new Error('lease lapsed'));
    await expect(outbox.deliver(ctxA, stopped.effect)).rejects.toThrow('lease lapsed');
    expect(stopped.sent).toHaveLength(0);
    expect((await store.forRun(runId)).filter((r) => r.callId === ctxA.callId)).toEqual([]);

    // A row waiting to retry (its first attempt was not acted on), read by this holder.
    const waiting = async (ctx: ToolContext, effect: Effect) => {
      const { row } = await store.record(
        recordOf(ctx, effect, effectKey(runId, 1, ctx.callId, effect.name)),
      );
      await store.retryLater(row.id, 'rate limited');
    };

    // Another holder begins (and makes) the effect between this holder's read and its attempt.
    const shown = provider();
    const ctxB = ctxFor();
    await waiting(ctxB, shown.effect);
    const rivalFirst = {
      ...store,
      async beginAttempt(id: string, attemptsRead: number) {
        await store.beginAttempt(id, attemptsRead);
        shown.made.set(effectKey(runId, 1, ctxB.callId, shown.effect.name).uuid, {
          externalId: 'the-rival-made-it',
        });
        return store.beginAttempt(id, attemptsRead);
      },
    };
    const contended = await createOutbox({ store: rivalFirst, sleep }).deliver(ctxB, shown.effect);
    expect(contended).toMatchObject({
      state: 'delivered',
      receipt: { externalId: 'the-rival-made-it' },
      settledEarlier: true,
    });
    expect(shown.sent).toHaveLength(0);

    // A provider that cannot be asked: the contended effect is unknown, and not sent.
    const blind = provider([], false);
    const ctxC = ctxFor();
    await waiting(ctxC, blind.effect);
    const rivalBlind = {
      ...store,
      async beginAttempt(id: string, attemptsRead: number) {
        await store.beginAttempt(id, attemptsRead);
        return store.beginAttempt(id, attemptsRead);
      },
    };
    const unknown = await createOutbox({ store: rivalBlind, sleep }).deliver(ctxC, blind.effect);
    expect(unknown.state).toBe('unknown');
    expect(blind.sent).toHaveLength(0);
  });
});
