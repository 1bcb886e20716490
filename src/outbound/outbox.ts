import { randomUUID } from 'node:crypto';
import type { ToolContext } from '../tool/context.ts';
import { hasCode, MeshError } from '../tool/errors.ts';
import {
  DeliveryError,
  type Delivery,
  type Effect,
  type EffectKey,
  type EffectReceipt,
  type Outbox,
  callEffectsOf,
  effectKey,
} from '../tool/outbound.ts';
import {
  retrying,
  retryPolicy,
  sleep as abortableSleep,
  type RetryPolicy,
} from '../tool/retry-policy.ts';

import type { NewOutboundEvent, OutboundEventRecord, OutboundStore } from './records.ts';

/** Points on an effect's path where the crash campaign kills its worker. */
export type OutboundPoint = 'after_record' | 'after_send';

export interface OutboxHooks {
  at(point: OutboundPoint, event: OutboundEventRecord): void | Promise<void>;
}

/** How often and how patiently an effect is attempted: four attempts, 250 ms doubling to 10 s. */
export const DEFAULT_RETRY: RetryPolicy = retryPolicy({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
});

export interface OutboxOptions {
  readonly store: OutboundStore;
  readonly retry?: RetryPolicy;
  /** Waits between attempts; injected so a test does not sleep. Rejects when `signal` aborts. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where the backoff's jitter comes from (default Math.random; tests pin it). */
  readonly random?: () => number;
  readonly hooks?: OutboxHooks;
}

/** An effect tool called outside a recorded run step: its effects could not be keyed. */
export class UnrecordedEffectError extends MeshError {
  static readonly code = 'effect_unrecorded';
  constructor(tool: string) {
    super(
      UnrecordedEffectError.code,
      `tool ${tool} hands effects to the outbound machinery, which needs the call's recorded step`,
    );
  }
}

function stored(receipt: EffectReceipt) {
  return {
    externalId: receipt.externalId,
    link: receipt.link ?? null,
    result: receipt.data ?? null,
  };
}

function receiptOf(row: OutboundEventRecord): EffectReceipt {
  return {
    externalId: row.externalId ?? '',
    ...(row.link === null ? {} : { link: row.link }),
    ...(row.result === null ? {} : { data: row.result }),
  };
}

/** What is recorded of `effect`, a call's effect under `key`, before its first attempt. */
export function outboundEvent(
  ctx: Pick<ToolContext, 'runId' | 'callId' | 'toolName'>,
  step: number,
  effect: Effect,
  key: EffectKey,
): NewOutboundEvent {
  return {
    id: randomUUID(),
    idempotencyKey: key.key,
    runId: ctx.runId,
    stepSeq: step,
    callId: ctx.callId,
    toolName: ctx.toolName,
    kind: effect.kind,
    target: effect.target,
    payload: effect.payload,
    reconciles: effect.lookup !== undefined,
  };
}

/** The row a call's stamp recorded for `event`: `delivering`, its first attempt begun. */
function begunRow(event: NewOutboundEvent): OutboundEventRecord {
  const now = new Date();
  return {
    ...event,
    state: 'delivering',
    attempts: 1,
    lastError: null,
    externalId: null,
    link: null,
    result: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A failure the handler did not classify: the attempt may have reached the provider. */
function classify(error: unknown): DeliveryError {
  // Matched on the code, not the class: a package may hold its own copy of the contract.
  if (hasCode(error, DeliveryError.code)) {
    const failure = error.data?.['failure'];
    const retryAfterMs = error.data?.['retry_after_ms'];
    if (failure === 'retryable' || failure === 'terminal' || failure === 'ambiguous')
      return new DeliveryError(
        failure,
        error.message,
        typeof retryAfterMs === 'number' ? { retryAfterMs } : undefined,
      );
  }
  return new DeliveryError('ambiguous', 'the attempt ended without an answer from the provider');
}

const UNKNOWN_TEXT =
  'an attempt was made but its answer was lost, and this provider cannot be asked what it did; ' +
  'the effect was not sent again';
const CONTENDED_TEXT =
  'another holder of this run began delivering this effect meanwhile; its outcome is unknown here, ' +
  'and the effect was not sent again';
const UNANSWERED_LOOKUP_TEXT =
  'an attempt was made but its answer was lost, and asking the provider what it did failed too; ' +
  'the effect was not sent again';

/** Why an effect is unknown: its provider has no lookup, or the lookup did not answer. */
function unknownText(effect: Effect): string {
  return effect.lookup ? UNANSWERED_LOOKUP_TEXT : UNKNOWN_TEXT;
}

/** What the delivery machinery works with, defaults filled in. */
interface OutboxDeps {
  readonly store: OutboundStore;
  readonly hooks?: OutboxHooks;
  readonly retry: RetryPolicy;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random?: () => number;
}

/**
 * Records a delivery and says so: at once, or, when the call's end settles its effects (a run's
 * call loop), with the call's observation in one commit.
 */
async function deliveredAs(
  ctx: ToolContext,
  store: OutboundStore,
  row: OutboundEventRecord,
  receipt: EffectReceipt,
  attempts: number,
  settledEarlier: boolean,
): Promise<Delivery> {
  const effects = callEffectsOf(ctx);
  await store.delivered(
    row.id,
    stored(receipt),
    effects && ((kept) => effects.delivered({ id: row.id, ...kept })),
  );
  return { state: 'delivered', receipt, attempts, settledEarlier };
}

/**
 * Asks the provider what an attempt with our key made; undefined when it cannot be asked (no
 * lookup, or the lookup itself failed: then nothing is known, and nothing is sent).
 */
async function reconcile(
  ctx: ToolContext,
  effect: Effect,
  key: EffectKey,
): Promise<EffectReceipt | 'nothing' | undefined> {
  if (!effect.lookup) return undefined;
  try {
    return (await effect.lookup(key)) ?? 'nothing';
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    return undefined;
  }
}

/**
 * Attempts an effect until it is delivered, fails for good, or its attempts (counted on its row,
 * across every holder of the run) are spent. Each attempt is begun on the row first (the first one
 * by recording it, when this holder recorded the row: `begun`); a retryable
 * failure is recorded there, and the next attempt waits the shared backoff or the provider's
 * Retry-After.
 */
async function attemptUntilSettled(
  deps: OutboxDeps,
  ctx: ToolContext,
  effect: Effect,
  key: EffectKey,
  first: OutboundEventRecord,
  begun: boolean,
): Promise<Delivery> {
  const { store, hooks, retry, sleep } = deps;
  let row = first;
  // The first attempt of a row this holder just recorded was begun by recording it.
  let begin = !begun;
  const attemptOnce = async (): Promise<Delivery> => {
    if (begin) {
      // A holder that has stopped (its lease lapsed) never begins an attempt: the run's next
      // holder may have read this row already, and would then find its own attempt contended.
      ctx.signal.throwIfAborted();
      const begunNow = await store.beginAttempt(row.id, row.attempts);
      if (!begunNow) {
        // Another holder of this run began an attempt since this one read the row: its outcome
        // is that holder's to record, and sending too could duplicate the effect. A provider
        // that can be asked may already show what it made.
        const found = await reconcile(ctx, effect, key);
        if (found !== undefined && found !== 'nothing')
          return deliveredAs(ctx, store, row, found, row.attempts + 1, true);
        return { state: 'unknown', error: CONTENDED_TEXT, attempts: row.attempts + 1 };
      }
      row = begunNow;
    }
    begin = true;
    let failure: DeliveryError;
    try {
      const receipt = await effect.send(key);
      await hooks?.at('after_send', row);
      return await deliveredAs(ctx, store, row, receipt, row.attempts, false);
    } catch (error) {
      // A stop mid-attempt leaves the row `delivering`: the run's next holder settles it. So
      // does a failure to store the answer: the effect happened, and saying so is for the next
      // holder's reconcile (or its unknown), not a retry.
      if (ctx.signal.aborted || hasCode(error, 'database_error')) throw error;
      failure = classify(error);
    }
    if (failure.failure === 'terminal') {
      await store.failed(row.id, failure.message);
      return { state: 'failed', error: failure.message, attempts: row.attempts };
    }
    if (failure.failure === 'ambiguous') {
      const found = await reconcile(ctx, effect, key);
      if (found === undefined) {
        const error = `${failure.message}; ${unknownText(effect)}`;
        await store.unknown(row.id, error);
        return { state: 'unknown', error, attempts: row.attempts };
      }
      if (found !== 'nothing') return deliveredAs(ctx, store, row, found, row.attempts, false);
    }
    if (row.attempts >= retry.maxAttempts) {
      const error = `${failure.message} (gave up after ${row.attempts} attempts)`;
      await store.failed(row.id, error);
      return { state: 'failed', error, attempts: row.attempts };
    }
    await store.retryLater(row.id, failure.message);
    throw failure;
  };
  return retrying(attemptOnce, {
    // The row counts the attempts, so the loop itself never gives up; the waits stop when the
    // run does (the signal reaches them through `sleep`, and an aborted attempt is rethrown).
    policy: { ...retry, maxAttempts: Number.MAX_SAFE_INTEGER },
    signal: NEVER_ABORTED,
    sleep: (ms) => sleep(ms, ctx.signal),
    ...(deps.random ? { random: deps.random } : {}),
    judge: (error) =>
      error instanceof DeliveryError
        ? error.retryAfterMs === undefined
          ? {}
          : { retryAfterMs: error.retryAfterMs }
        : undefined,
  });
}

/** The retry loop's own signal: the run's reaches the waits and the attempts directly. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * The delivery machinery: records each effect under its key before the first attempt, attempts
 * it with backoff while the provider says to retry, and settles what an earlier holder of the run
 * left (`delivering` after a crash): reconciled through the provider's lookup when it has one,
 * otherwise reported unknown and never sent again.
 */
export function createOutbox(options: OutboxOptions): Outbox {
  const { store, hooks } = options;
  const deps: OutboxDeps = {
    store,
    ...(hooks ? { hooks } : {}),
    retry: options.retry ?? DEFAULT_RETRY,
    sleep: options.sleep ?? abortableSleep,
    ...(options.random ? { random: options.random } : {}),
  };

  return Object.freeze({
    async deliver(ctx: ToolContext, effect: Effect): Promise<Delivery> {
      if (ctx.step === undefined) throw new UnrecordedEffectError(ctx.toolName);
      const key = effectKey(ctx.runId, ctx.step, ctx.callId, effect.name);
      // Recording a new effect begins its first attempt: a stopped holder records nothing.
      ctx.signal.throwIfAborted();
      const event = outboundEvent(ctx, ctx.step, effect, key);
      // Recorded and begun by this call's stamp (a declared effect), or now: not yet on the
      // wire. A crash from here to the send leaves it `delivering`, which the run's next holder
      // reconciles or reports unknown, never sends blind.
      const begunId = callEffectsOf(ctx)?.begunWithStamp.get(key.key);
      const { row, begun } =
        begunId === undefined
          ? await store.record(event)
          : { row: begunRow({ ...event, id: begunId }), begun: true };
      if (begun) {
        await hooks?.at('after_record', row);
        return attemptUntilSettled(deps, ctx, effect, key, row, true);
      }
      switch (row.state) {
        case 'delivered':
          return {
            state: 'delivered',
            receipt: receiptOf(row),
            attempts: row.attempts,
            settledEarlier: true,
          };
        case 'failed':
          return {
            state: 'failed',
            error: row.lastError ?? 'delivery failed',
            attempts: row.attempts,
          };
        case 'unknown':
          return { state: 'unknown', error: row.lastError ?? UNKNOWN_TEXT, attempts: row.attempts };
        case 'pending':
          // Waiting to retry (or recorded before attempts began with the record): nothing of it
          // is on the wire.
          return attemptUntilSettled(deps, ctx, effect, key, row, false);
        case 'delivering': {
          // An earlier holder began an attempt and stopped before its answer was stored.
          const found = await reconcile(ctx, effect, key);
          ctx.signal.throwIfAborted();
          if (found === undefined) {
            const error = unknownText(effect);
            await store.unknown(row.id, error);
            return { state: 'unknown', error, attempts: row.attempts };
          }
          if (found !== 'nothing') return deliveredAs(ctx, store, row, found, row.attempts, true);
          return attemptUntilSettled(deps, ctx, effect, key, row, false);
        }
        default: {
          const never: never = row.state;
          throw new Error(`unknown delivery state ${String(never)}`);
        }
      }
    },
  });
}
