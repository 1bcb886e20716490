import type { ToolCall } from '../model/wire.ts';
import type { ToolRuntime } from '../tool/context.ts';
import { toolEffect } from '../tool/effect.ts';
import { settlesThroughOutbox } from '../tool/outbound.ts';
import { hasCode, MeshError, serializeError } from '../tool/errors.ts';
import { FatalToolError, invoke, resolveCall, type ExecuteResult } from '../tool/executor.ts';
import { observation, type Observation } from '../tool/observation.ts';
import type { ToolUsage } from '../tool/definition.ts';
import type { Registry } from '../tool/registry.ts';
import type { Lease, ToolCallStep } from './records.ts';
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
}

/**
 * Runs one call on the commit-boundary-aware path: decode → record the call (for an effect, the
 * write-ahead commit stamp) → invoke → record the observation. A refused call is recorded with its
 * observation and never reaches the handler. A fatal handler error marks the call failed and is
 * rethrown to fail the run.
 */
export async function performToolCall(
  ctx: ToolStepContext,
  proposed: ToolCall,
): Promise<ToolCallOutcome> {
  // A held secret in the model's arguments never reaches a tool: the call runs as recorded.
  const call = ctx.ledger.cleanCall(proposed);
  const resolved = resolveCall(ctx.registry, call);
  if (resolved.kind !== 'ready') {
    const definition = resolved.kind === 'invalid_input' ? resolved.definition : undefined;
    const steps = await ctx.ledger.recordRefusal(ctx.lease, call, definition, resolved.observation);
    return {
      kind: resolved.kind,
      observation: resolved.observation,
      callStep: steps.call,
      usage: {},
    };
  }
  await ctx.hooks?.at('before_record', call);
  const callStep = await ctx.ledger.recordToolCall(ctx.lease, call, resolved.definition);
  await ctx.hooks?.at('after_record', call);
  return complete(ctx, call, callStep, () =>
    invoke(resolved.definition, resolved.args, call, ctx.runtime, callStep.seq),
  );
}

async function complete(
  ctx: ToolStepContext,
  call: ToolCall,
  callStep: ToolCallStep,
  run: () => Promise<Exclude<ExecuteResult, { kind: 'unknown_tool' }>>,
): Promise<ToolCallOutcome> {
  let result: Exclude<ExecuteResult, { kind: 'unknown_tool' }>;
  const interrupted = () => new RunInterruptedError(ctx.lease.runId, call.id);
  try {
    result = await run();
  } catch (error) {
    if (ctx.runtime.signal.aborted) throw interrupted();
    if (hasCode(error, FatalToolError.code)) {
      const failure = error.toJSON();
      await ctx.ledger.recordObservation(
        ctx.lease,
        callStep,
        observation({
          kind: 'result',
          text: `the call failed: ${error.message}`,
          data: { error: { ...failure } },
        }),
        'failed',
      );
    }
    throw error;
  }
  // An outcome reached after the stop is not the call's own (an aborted fetch, a cut stream).
  if (ctx.runtime.signal.aborted) throw interrupted();
  await ctx.hooks?.at('after_execute', call);
  const recorded = await ctx.ledger.recordObservation(
    ctx.lease,
    callStep,
    result.observation,
    result.observation.kind === 'unknown_outcome' ? 'unknown' : 'completed',
    result.kind === 'observation' ? result.attachments : undefined,
  );
  await ctx.hooks?.at('after_observation', call);
  const usage = result.kind === 'observation' ? (result.usage ?? {}) : {};
  return { kind: result.kind, observation: recorded.observation, callStep, usage };
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
    return { kind: 'unknown_outcome', observation: stored.observation, callStep, usage: {} };
  }
  const resolved = resolveCall(ctx.registry, call);
  if (resolved.kind !== 'ready') {
    const stored = await ctx.ledger.recordObservation(
      ctx.lease,
      callStep,
      resolved.observation,
      'completed',
    );
    return { kind: resolved.kind, observation: stored.observation, callStep, usage: {} };
  }
  return complete(ctx, call, callStep, () =>
    invoke(resolved.definition, resolved.args, call, ctx.runtime, callStep.seq),
  );
}

/** Serializes an error for a run's reason without leaking its stack. */
export function describeFailure(error: unknown): string {
  const { code, message } = serializeError(error);
  return `${code}: ${message}`;
}
