import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { Definition, ToolUsage } from '../tool/definition.ts';
import { resolveCall } from '../tool/executor.ts';
import type { Clock } from '../tool/clock.ts';
import { addToolUsage, exhaustion, type Budget, type Exhaustion, type RunUsage } from './budget.ts';
import type { StepRecord, ToolCallStep } from './records.ts';
import { performToolCall, resumeToolCall, type ToolStepContext } from './tool-step.ts';

/** What settling a list of calls came to. */
export type CallsSettled =
  | {
      readonly kind: 'settled';
      readonly usage: RunUsage;
      /** The run's steps after the calls: the input's, with what settling them wrote. */
      readonly steps: readonly StepRecord[];
      /** `name (id)` of every call whose outcome is unknown (observed so, or resumed so). */
      readonly unknown: readonly string[];
    }
  | { readonly kind: 'budget_exhausted'; readonly exhaustion: Exhaustion }
  | {
      /** A call of a parking tool (request_input) is next: the run waits for a person. */
      readonly kind: 'parked';
      /** The call, cleaned of held secrets, with its decoded arguments; nothing is recorded yet. */
      readonly call: ToolCall;
      readonly definition: Definition;
      readonly args: JsonObject;
      /** The run's usage with the parking call counted. */
      readonly usage: RunUsage;
    }
  | { readonly kind: 'interrupted' };

/** A meter a call found spent: a provider's per-run ceiling, or the run's browser session time. */
function spent(metered: ToolUsage & { readonly exhausted: string }): CallsSettled {
  const budget = metered.exhaustedMeter ?? 'providerCalls';
  return { kind: 'budget_exhausted', exhaustion: { budget, reason: metered.exhausted } };
}

/**
 * The call and its arguments when it is a valid call of a parking tool; undefined otherwise (a
 * refused call of one is recorded as any refusal is, by performing it).
 */
function parkingCall(
  ctx: ToolStepContext,
  proposed: ToolCall,
): { call: ToolCall; definition: Definition; args: JsonObject } | undefined {
  const call = ctx.ledger.cleanCall(proposed);
  const resolved = resolveCall(ctx.registry, call);
  if (resolved.kind !== 'ready' || resolved.definition.parks !== true) return undefined;
  return { call, definition: resolved.definition, args: resolved.args };
}

/** The calls to settle and what the run has recorded and spent so far. */
export interface CallsInput {
  readonly ctx: ToolStepContext;
  readonly calls: readonly ToolCall[];
  /** The run's steps as recorded: they say which calls started and which were observed. */
  readonly steps: readonly StepRecord[];
  readonly usage: RunUsage;
  readonly budget: Budget;
  readonly startedAt: Date;
  readonly clock: Clock;
  readonly signal: AbortSignal;
}

/**
 * The one resume-or-perform loop, shared by every driver that runs tool calls. In order, each
 * call that was observed is skipped; one that was recorded but never observed is resumed by the
 * commit-boundary rule (never re-executed once it crossed it); one never recorded is performed
 * after the budget is checked, and counted in the run's usage before the next. A call of a parking
 * tool stops the loop unrecorded: the driver parks the run on it (its later calls wait for the
 * answer).
 */
export async function settleCalls(input: CallsInput): Promise<CallsSettled> {
  const { ctx, budget } = input;
  const recorded = new Map<string, ToolCallStep>();
  const observed = new Map<string, string>();
  for (const step of input.steps) {
    if (step.kind === 'tool_call' && !recorded.has(step.callId)) recorded.set(step.callId, step);
    if (step.kind === 'observation') {
      const kind = step.observation['kind'];
      observed.set(step.callId, typeof kind === 'string' ? kind : '');
    }
  }
  const unknown: string[] = [];
  let usage = input.usage;
  const steps = [...input.steps];
  const keep = (written: readonly StepRecord[]) => {
    for (const step of written) {
      const at = steps.findIndex((s) => s.seq === step.seq);
      if (at >= 0) steps[at] = step;
      else steps.push(step);
    }
  };
  for (const call of input.calls) {
    if (input.signal.aborted) return { kind: 'interrupted' };
    const seen = observed.get(call.id);
    if (seen !== undefined) {
      if (seen === 'unknown_outcome') unknown.push(`${call.name} (${call.id})`);
      continue;
    }
    const started = recorded.get(call.id);
    if (started) {
      const outcome = await resumeToolCall(ctx, started);
      keep(outcome.steps);
      if (outcome.kind === 'unknown_outcome') unknown.push(`${call.name} (${call.id})`);
      if (Object.keys(outcome.usage).length > 0) {
        usage = addToolUsage(usage, outcome.usage);
        await ctx.ledger.progress(ctx.lease, { usage: { ...usage } });
      }
      if (outcome.usage.exhausted !== undefined)
        return spent({ ...outcome.usage, exhausted: outcome.usage.exhausted });
      continue;
    }
    const next = { ...usage, toolCalls: usage.toolCalls + 1 };
    const out = exhaustion(budget, next, input.startedAt, input.clock.now());
    if (out) return { kind: 'budget_exhausted', exhaustion: out };
    const parking = parkingCall(ctx, call);
    if (parking) return { kind: 'parked', ...parking, usage: next };
    // The usage is saved in the write that records the call's end.
    const outcome = await performToolCall(ctx, call, (metered) => ({
      ...addToolUsage(next, metered),
    }));
    keep(outcome.steps);
    usage = addToolUsage(next, outcome.usage);
    // A meter the call found spent ends the run once the call's observation is on record.
    if (outcome.usage.exhausted !== undefined)
      return spent({ ...outcome.usage, exhausted: outcome.usage.exhausted });
  }
  return { kind: 'settled', usage, unknown, steps };
}
