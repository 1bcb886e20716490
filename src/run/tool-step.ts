import type { ToolCall } from '../model/wire.ts';
import type { ToolRuntime } from '../tool/context.ts';
import type { JsonObject } from '../model/json.ts';
import { toolEffect } from '../tool/effect.ts';
import { settlesThroughOutbox, type DeliveredEffect } from '../tool/outbound.ts';
import { hasCode, MeshError, serializeError } from '../tool/errors.ts';
import { FatalToolError, invoke, resolveCall, type ExecuteResult } from '../tool/executor.ts';
import { observation, type Observation } from '../tool/observation.ts';
import type { Definition, ToolAttachment, ToolUsage } from '../tool/definition.ts';
import type { Registry } from '../tool/registry.ts';
import type { CallStatus, Lease, StepRecord, ToolCallStep } from './records.ts';
import type { RunLedger } from './ledger.ts';

/** Points on a call's path where a test can inject a crash; production passes no hooks. */
export type CallPoint = 'before_record' | 'after_record' | 'after_execute' | 'after_observation';

export interface CallHooks {
  at(point: CallPoint, call: ToolCall): void | Promise<void>;
}

/** What a call runs against: the run's lease, its policy-scoped registry, and its runtime. */
export interface ToolStepContext {
  readonly ledger: RunLedger;
  readonly lease: Lease;
  readonly registry: Registry;
  readonly runtime: ToolRuntime;
  readonly hooks?: CallHooks;
}

/**
 * The run's work was stopped (its lease was lost or given up, or its worker is stopping) while a
 * call was in flight. Nothing about the call is recorded: whatever the handler came to was cut
 * short by the stop, not by the world, so the holder that resumes the run settles the call by the
 * commit-boundary rule (re-run if replayable and unstamped, otherwise reported as unknown).
 */
export class RunInterruptedError extends MeshError {
  static readonly code = 'run_interrupted';
  constructor(runId: string, callId: string) {
    super(
      RunInterruptedError.code,
      `run ${runId} was interrupted during call ${callId}; the run's next holder settles the call`,
    );
  }
}

/** How one call ended, with the observation as persisted (excerpted if it was large). */
export interface ToolCallOutcome {
  readonly kind: ExecuteResult['kind'] | 'unknown_outcome';
  readonly observation: Observation;
  readonly callStep: ToolCallStep;
  /** What the call metered beyond itself (a workspace's compute, provider calls); most: none. */
  readonly usage: ToolUsage;
  /**
   * The steps this call wrote, as a read of the run would now return them (the call step with its
   * end), so a driver holding the lease can keep the run's steps without reading them again.
   */
  readonly steps: readonly StepRecord[];
}

/** What running a call of a new round came to; nothing of it is written yet. */
export type FreshOutcome =
  | {
      readonly kind: 'done';
      readonly result: Observation;
      readonly status: 'completed' | 'unknown';
      readonly usage: ToolUsage;
      readonly attachments?: readonly ToolAttachment[];
      /** How long ago the handler was called. */
      readonly startedMsAgo: number;
      /** The effects it delivered, to be marked so with its end. */
      readonly delivered: readonly DeliveredEffect[];
    }
  | {
      /** The handler failed in a way that fails the run: `result` is the call's record of it. */
      readonly kind: 'fatal';
      readonly result: Observation;
      readonly error: unknown;
      readonly startedMsAgo: number;
      readonly attachments?: undefined;
      readonly delivered: readonly DeliveredEffect[];
    }
  | { readonly kind: 'interrupted'; readonly error: RunInterruptedError };

/**
 * Runs one decoded call of a round (its write-ahead record, when it needs one, is already
 * committed as step `seq`) and types what it came to. A fatal handler error and a stop of the
 * run's work come back as values, so the round can keep what its earlier calls came to. The
 * effects the call delivers come back with it, for its end to mark delivered in its own commit;
 * a call stopped or broken after a delivery has them marked at once, since no end follows.
 * `begunWithStamp`: its declared effect's key and event id, when its stamp's commit recorded it.
 */
export async function runFreshCall(
  ctx: ToolStepContext,
  call: ToolCall,
  definition: Definition,
  args: JsonObject,
  seq: number | undefined,
  begunWithStamp: ReadonlyMap<string, string> = NONE_BEGUN,
): Promise<FreshOutcome> {
  const began = performance.now();
  const delivered: DeliveredEffect[] = [];
  const interrupted = async () => {
    await ctx.ledger.settleDelivered(delivered).catch(() => undefined);
    return {
      kind: 'interrupted' as const,
      error: new RunInterruptedError(ctx.lease.runId, call.id),
    };
  };
  let result: Exclude<ExecuteResult, { kind: 'unknown_tool' }>;
  try {
    result = await invoke(definition, args, call, ctx.runtime, seq, {
      begunWithStamp,
      delivered: (effect) => void delivered.push(effect),
    });
  } catch (error) {
    if (ctx.runtime.signal.aborted) return interrupted();
    if (!hasCode(error, FatalToolError.code)) {
      await ctx.ledger.settleDelivered(delivered).catch(() => undefined);
      throw error;
    }
    return {
      kind: 'fatal',
      error,
      startedMsAgo: performance.now() - began,
      result: observation({
        kind: 'result',
        text: `the call failed: ${error.message}`,
        data: { error: { ...error.toJSON() } },
      }),
      delivered,
    };
  }
  // An outcome reached after the stop is not the call's own (an aborted fetch, a cut stream).
  if (ctx.runtime.signal.aborted) return interrupted();
  return {
    kind: 'done',
    result: result.observation,
    status: result.observation.kind === 'unknown_outcome' ? 'unknown' : 'completed',
    usage: result.kind === 'observation' ? (result.usage ?? {}) : {},
    ...(result.kind === 'observation' && result.attachments
      ? { attachments: result.attachments }
      : {}),
    startedMsAgo: performance.now() - began,
    delivered,
  };
}

const NONE_BEGUN: ReadonlyMap<string, string> = new Map();

/** The observation of a call recorded with its round that never ran, and why. */
export function notRun(why: string): Observation {
  return observation({ kind: 'not_run', text: `Not run: ${why}. Nothing was done.` });
}

/**
 * The end of a call recorded ahead of it: its observation, which also finishes the call step and
 * marks the effects it delivered delivered.
 */
function afterRecord(ctx: ToolStepContext, callStep: ToolCallStep) {
  return async (
    result: Observation,
    status: CallStatus,
    delivered: readonly DeliveredEffect[],
  ): Promise<{ callStep: ToolCallStep; step: StepRecord; observation: Observation }> => {
    const [recorded] = await ctx.ledger.recordSteps(ctx.lease, [
      { kind: 'observed', callStep, result, status, delivered },
    ]);
    const step = recorded?.steps[0] as StepRecord;
    return {
      callStep: { ...callStep, status, finishedAt: step.startedAt },
      step,
      observation: recorded?.observation as Observation,
    };
  };
}

/** Runs a resumed call again and writes its end at once (resumption is rare: one commit a call). */
async function complete(
  ctx: ToolStepContext,
  call: ToolCall,
  definition: Definition,
  args: JsonObject,
  callStep: ToolCallStep,
): Promise<ToolCallOutcome> {
  const record = afterRecord(ctx, callStep);
  const outcome = await runFreshCall(ctx, call, definition, args, callStep.seq);
  if (outcome.kind === 'interrupted') throw outcome.error;
  if (outcome.kind === 'fatal') {
    await record(outcome.result, 'failed', outcome.delivered);
    throw outcome.error;
  }
  await ctx.hooks?.at('after_execute', call);
  const recorded = await record(outcome.result, outcome.status, outcome.delivered);
  await ctx.hooks?.at('after_observation', call);
  return {
    kind: outcome.result.kind === 'unknown_outcome' ? 'unknown_outcome' : 'observation',
    observation: recorded.observation,
    callStep: recorded.callStep,
    usage: outcome.usage,
    steps: [recorded.callStep, recorded.step],
  };
}

/**
 * Finishes a call that a previous holder of the run started but never observed. The decision
 * reads the class and replay recorded with the call, not today's definition: a call that crossed
 * the commit boundary (or is otherwise not replayable) is never executed again; it gets an
 * observation saying its outcome is unknown. A replayable or internal call is executed again, and
 * so is an effect call whose effects all go through the outbound machinery: that finds each
 * recorded effect by its key and delivers, reconciles or reports it unknown, never sending twice.
 */
export async function resumeToolCall(
  ctx: ToolStepContext,
  callStep: ToolCallStep,
): Promise<ToolCallOutcome> {
  const call: ToolCall = {
    id: callStep.callId,
    name: callStep.toolName,
    arguments: callStep.arguments,
  };
  const recorded = callStep.effect;
  const definition = ctx.registry.get(call.name);
  const reexecute =
    recorded !== null &&
    ((toolEffect(recorded).onResume === 'reexecute' && callStep.committedAt === null) ||
      (definition !== undefined && settlesThroughOutbox(definition)));
  if (
    !reexecute ||
    !definition ||
    definition.class !== recorded.class ||
    definition.replay !== recorded.replay
  ) {
    const unknown = observation({
      kind: 'unknown_outcome',
      text:
        `The call ${call.id} to ${call.name} was interrupted after it ${callStep.committedAt ? 'crossed the commit boundary' : 'started'}; ` +
        'it may or may not have taken effect, and it was not repeated. Check its effect before trying again.',
    });
    const stored = await ctx.ledger.recordObservation(ctx.lease, callStep, unknown, 'unknown');
    return {
      kind: 'unknown_outcome',
      observation: stored.observation,
      callStep,
      usage: {},
      steps: [{ ...callStep, status: 'unknown', finishedAt: stored.step.startedAt }, stored.step],
    };
  }
  const resolved = resolveCall(ctx.registry, call);
  if (resolved.kind !== 'ready') {
    const stored = await ctx.ledger.recordObservation(
      ctx.lease,
      callStep,
      resolved.observation,
      'completed',
    );
    return {
      kind: resolved.kind,
      observation: stored.observation,
      callStep,
      usage: {},
      steps: [{ ...callStep, status: 'completed', finishedAt: stored.step.startedAt }, stored.step],
    };
  }
  return complete(ctx, call, resolved.definition, resolved.args, callStep);
}

/** Serializes an error for a run's reason without leaking its stack. */
export function describeFailure(error: unknown): string {
  const { code, message } = serializeError(error);
  return `${code}: ${message}`;
}
