import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { Definition } from '../tool/definition.ts';
import { recordsAfterRun } from '../tool/effect.ts';
import { resolveCall } from '../tool/executor.ts';
import type { Observation } from '../tool/observation.ts';
import type { Clock } from '../tool/clock.ts';
import { exhaustion, type Budget, type Exhaustion, type RunUsage } from './budget.ts';
import type { LedgerWrite, PreparedSteps } from './ledger.ts';
import type { StepRecord, ToolCallStep } from './records.ts';
import type { ToolStepContext } from './tool-step.ts';

/*
 * A round of calls as settleCalls (call-loop.ts) takes it, plans it, and says what it came to.
 */

/** What settling a list of calls came to. */
export type CallsSettled =
  | {
      readonly kind: 'settled';
      readonly usage: RunUsage;
      /** The run's steps after the calls: the input's, with what settling them wrote. */
      readonly steps: readonly StepRecord[];
      /** `name (id)` of every call whose outcome is unknown (observed so, or resumed so). */
      readonly unknown: readonly string[];
      /**
       * With `deferEnds`: the round's last ends, prepared and not yet written, to go in the same
       * commit as what the driver writes next; `steps` holds them as they will be written.
       */
      readonly pending?: PendingEnds;
    }
  | {
      readonly kind: 'budget_exhausted';
      readonly exhaustion: Exhaustion;
      /** The run's steps after the calls that ran before the budget ran out. */
      readonly steps: readonly StepRecord[];
    }
  | {
      /** A call of a parking tool (request_input) is next: the run waits for a person. */
      readonly kind: 'parked';
      /** The call, cleaned of held secrets, with its decoded arguments; nothing is recorded yet. */
      readonly call: ToolCall;
      readonly definition: Definition;
      readonly args: JsonObject;
      /** The run's usage with the parking call counted. */
      readonly usage: RunUsage;
      readonly steps: readonly StepRecord[];
    }
  | { readonly kind: 'interrupted' };

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
  /**
   * Steps not yet written that must be on record before any of the calls runs (the round's model
   * request and response): written in the same commit as the calls' write-ahead records, with
   * `leadUsage` (the run's usage after the response).
   */
  readonly lead?: readonly LedgerWrite[];
  readonly leadUsage?: JsonObject;
  /**
   * The round's last ends are not written but returned as `pending` (a turn writes them with its
   * next model request). Ends written sooner for the record's sake are written as ever.
   */
  readonly deferEnds?: boolean;
}

/** A round's ends held back to be written with the driver's next write. */
export interface PendingEnds {
  readonly prepared: PreparedSteps;
  /** The run's usage after the round, saved with them. */
  readonly usage: JsonObject;
}

/** A call as the round plans it, in the model's order. */
export type Planned =
  | { readonly kind: 'resume'; readonly call: ToolCall; readonly step: ToolCallStep }
  | {
      readonly kind: 'refuse';
      readonly call: ToolCall;
      readonly definition: Definition | undefined;
      readonly refusal: Observation;
    }
  | {
      /** Recorded ahead (`stamped`: the write-ahead record is in the round's first commit). */
      readonly kind: 'ahead' | 'after';
      readonly call: ToolCall;
      readonly definition: Definition;
      readonly args: JsonObject;
    };

/** Where a round stops before its end: a budget, or a parking call. */
export type RoundStop = Exclude<CallsSettled, { kind: 'settled' | 'interrupted' }>;

/** What planning a round found: its calls in order, where it stops, and what it already knew. */
export interface RoundPlan {
  readonly plan: readonly Planned[];
  readonly stop: RoundStop | undefined;
  /** `name (id)` of every call already observed as unknown. */
  readonly unknown: string[];
  /** The run's steps, copied: settling the round keeps what it writes here. */
  readonly steps: StepRecord[];
}

/**
 * Plans a round: a call already observed is skipped, one recorded and never observed is resumed,
 * and each fresh one is checked against the budget, cleaned of held secrets and resolved (a
 * refusal is planned as one). A budget spent, or a parking call, stops the plan there.
 */
export function planCalls(input: CallsInput): RoundPlan {
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
  const steps = [...input.steps];
  // Plan: which calls run, which are refused, and where the round stops before its end.
  const plan: Planned[] = [];
  let usage = input.usage;
  let stop: RoundStop | undefined;
  for (const proposed of input.calls) {
    const seen = observed.get(proposed.id);
    if (seen !== undefined) {
      if (seen === 'unknown_outcome') unknown.push(`${proposed.name} (${proposed.id})`);
      continue;
    }
    const started = recorded.get(proposed.id);
    if (started) {
      plan.push({ kind: 'resume', call: proposed, step: started });
      continue;
    }
    const next = { ...usage, toolCalls: usage.toolCalls + 1 };
    const out = exhaustion(budget, next, input.startedAt, input.clock.now());
    if (out) {
      stop = { kind: 'budget_exhausted', exhaustion: out, steps };
      break;
    }
    // A held secret in the model's arguments never reaches a tool: the call runs as recorded.
    const call = ctx.ledger.cleanCall(proposed);
    // Checked again per call: a remote definition changed since it was offered runs as an effect.
    const resolved = resolveCall(ctx.registry, call, ctx.runtime.agentId);
    if (resolved.kind === 'ready' && resolved.definition.parks === true) {
      stop = {
        kind: 'parked',
        call,
        definition: resolved.definition,
        args: resolved.args,
        usage: next,
        steps,
      };
      break;
    }
    usage = next;
    if (resolved.kind !== 'ready') {
      const definition = resolved.kind === 'invalid_input' ? resolved.definition : undefined;
      plan.push({ kind: 'refuse', call, definition, refusal: resolved.observation });
    } else {
      const kind = recordsAfterRun(resolved.definition) ? 'after' : 'ahead';
      plan.push({ kind, call, definition: resolved.definition, args: resolved.args });
    }
  }
  return { plan, stop, unknown, steps };
}

/** Keeps `written` in `steps`: a step of the same seq is replaced, a new one appended. */
export function keepSteps(steps: StepRecord[], written: readonly StepRecord[]): void {
  for (const step of written) {
    const at = steps.findIndex((s) => s.seq === step.seq);
    if (at >= 0) steps[at] = step;
    else steps.push(step);
  }
}
