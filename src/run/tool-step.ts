import type { ToolCall } from '../model/wire.ts';
import type { ToolRuntime } from '../tool/context.ts';
import type { JsonObject } from '../model/json.ts';
import { recordsAfterRun, toolEffect } from '../tool/effect.ts';
import { settlesThroughOutbox } from '../tool/outbound.ts';
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

/**
 * The run's usage counters once a call that metered `usage` is counted: saved in the same write
 * as the call's observation, so progress costs no statement of its own.
 */
export type UsageAfter = (usage: ToolUsage) => JsonObject;

/** Writes a call's end: its observation, and (recorded after it ran) the call step itself. */
type RecordEnd = (
  result: Observation,
  status: CallStatus,
  attachments: readonly ToolAttachment[] | undefined,
  usage: JsonObject | undefined,
) => Promise<{ callStep: ToolCallStep; step: StepRecord; observation: Observation }>;

/**
 * Runs one call on the commit-boundary-aware path: decode → record the call (for an effect, the
 * write-ahead commit stamp) → invoke → record the observation. A replayable query is not recorded
 * ahead: it runs, then the call and its observation are written together (a crash before that
 * leaves nothing, and the resumed run runs it again). A refused call is recorded with its
 * observation and never reaches the handler. A fatal handler error marks the call failed and is
 * rethrown to fail the run. `usageAfter` gives the run's usage to save with the call's end.
 */
export async function performToolCall(
  ctx: ToolStepContext,
  proposed: ToolCall,
  usageAfter?: UsageAfter,
): Promise<ToolCallOutcome> {
  // A held secret in the model's arguments never reaches a tool: the call runs as recorded.
  const call = ctx.ledger.cleanCall(proposed);
  const resolved = resolveCall(ctx.registry, call);
  if (resolved.kind !== 'ready') {
    const definition = resolved.kind === 'invalid_input' ? resolved.definition : undefined;
    const steps = await ctx.ledger.recordRefusal(
      ctx.lease,
      call,
      definition,
      resolved.observation,
      usageAfter?.({}),
    );
    return {
      kind: resolved.kind,
      observation: resolved.observation,
      callStep: steps.call,
      usage: {},
      steps: [steps.call, steps.observation],
    };
  }
  const definition = resolved.definition;
  await ctx.hooks?.at('before_record', call);
  if (recordsAfterRun(definition)) {
    await ctx.hooks?.at('after_record', call);
    const began = performance.now();
    return complete(
      ctx,
      call,
      () => invoke(definition, resolved.args, call, ctx.runtime),
      afterRun(ctx, call, definition, began),
      usageAfter,
    );
  }
  const callStep = await ctx.ledger.recordToolCall(ctx.lease, call, definition);
  await ctx.hooks?.at('after_record', call);
  return complete(
    ctx,
    call,
    () => invoke(definition, resolved.args, call, ctx.runtime, callStep.seq),
    afterRecord(ctx, callStep),
    usageAfter,
  );
}

/** The end of a call recorded ahead of it: its observation, which also finishes the call step. */
function afterRecord(ctx: ToolStepContext, callStep: ToolCallStep): RecordEnd {
  return async (result, status, attachments, usage) => {
    const recorded = await ctx.ledger.recordObservation(
      ctx.lease,
      callStep,
      result,
      status,
      attachments,
      usage,
    );
    return {
      callStep: { ...callStep, status, finishedAt: recorded.step.startedAt },
      step: recorded.step,
      observation: recorded.observation,
    };
  };
}

/** The end of a call not recorded ahead of it: the call and its observation, in one write. */
function afterRun(
  ctx: ToolStepContext,
  call: ToolCall,
  definition: Pick<Definition, 'class' | 'replay'>,
  began: number,
): RecordEnd {
  return async (result, status, attachments, usage) => {
    const recorded = await ctx.ledger.recordCallAfterRun(ctx.lease, call, definition, result, {
      callStatus: status,
      startedMsAgo: performance.now() - began,
      ...(attachments ? { attachments } : {}),
      ...(usage ? { usage } : {}),
    });
    return { callStep: recorded.call, step: recorded.step, observation: recorded.observation };
  };
}

async function complete(
  ctx: ToolStepContext,
  call: ToolCall,
  run: () => Promise<Exclude<ExecuteResult, { kind: 'unknown_tool' }>>,
  record: RecordEnd,
  usageAfter: UsageAfter | undefined,
): Promise<ToolCallOutcome> {
  let result: Exclude<ExecuteResult, { kind: 'unknown_tool' }>;
  const interrupted = () => new RunInterruptedError(ctx.lease.runId, call.id);
  try {
    result = await run();
  } catch (error) {
    if (ctx.runtime.signal.aborted) throw interrupted();
    if (hasCode(error, FatalToolError.code)) {
      const failure = error.toJSON();
      await record(
        observation({
          kind: 'result',
          text: `the call failed: ${error.message}`,
          data: { error: { ...failure } },
        }),
        'failed',
        undefined,
        undefined,
      );
    }
    throw error;
  }
  // An outcome reached after the stop is not the call's own (an aborted fetch, a cut stream).
  if (ctx.runtime.signal.aborted) throw interrupted();
  await ctx.hooks?.at('after_execute', call);
  const usage = result.kind === 'observation' ? (result.usage ?? {}) : {};
  const recorded = await record(
    result.observation,
    result.observation.kind === 'unknown_outcome' ? 'unknown' : 'completed',
    result.kind === 'observation' ? result.attachments : undefined,
    usageAfter?.(usage),
  );
  await ctx.hooks?.at('after_observation', call);
  return {
    kind: result.kind,
    observation: recorded.observation,
    callStep: recorded.callStep,
    usage,
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
  return complete(
    ctx,
    call,
    () => invoke(resolved.definition, resolved.args, call, ctx.runtime, callStep.seq),
    afterRecord(ctx, callStep),
    undefined,
  );
}

/** Serializes an error for a run's reason without leaking its stack. */
export function describeFailure(error: unknown): string {
  const { code, message } = serializeError(error);
  return `${code}: ${message}`;
}
