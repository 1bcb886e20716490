import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { Definition, ToolAttachment, ToolUsage } from '../tool/definition.ts';
import { recordsAfterRun, toolEffect } from '../tool/effect.ts';
import { settlesThroughOutbox } from '../tool/outbound.ts';
import { resolveCall } from '../tool/executor.ts';
import type { Observation } from '../tool/observation.ts';
import type { Clock } from '../tool/clock.ts';
import {
  addToolUsage,
  exhaustion,
  usageJson,
  type Budget,
  type Exhaustion,
  type RunUsage,
} from './budget.ts';
import { provisionalSteps } from './ledger-writes.ts';
import type { LedgerWrite, PreparedSteps, RecordedWrite } from './ledger.ts';
import type { StepRecord, ToolCallStep } from './records.ts';
import {
  notRun,
  resumeToolCall,
  runFreshCall,
  type FreshOutcome,
  type ToolStepContext,
} from './tool-step.ts';

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
type Planned =
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

/** A meter a call found spent: a provider's per-run ceiling, or the run's browser session time. */
function spentBy(metered: ToolUsage & { readonly exhausted: string }): Exhaustion {
  return { budget: metered.exhaustedMeter ?? 'providerCalls', reason: metered.exhausted };
}

/**
 * The one resume-or-perform loop, shared by every driver that runs tool calls. A round of fresh
 * calls is two commits: the write-ahead record of every call that needs one (an effect's commit
 * stamp), with the round's response, before any call runs; then, once they ran in order, every
 * call's end with the run's usage. Two things write an end sooner: a later call is about to start
 * after a call a resumed run could not run again (its outcome must not become unknown), or a
 * metered call spent some of a meter later calls read. A call that was observed is skipped; one that
 * was recorded but never observed is resumed by the commit-boundary rule (never re-executed once
 * it crossed it) and its observation written at once. The budget is checked before each call; a
 * call of a parking tool ends the round unrecorded, and the driver parks the run on it.
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
  const steps = [...input.steps];
  const keep = (written: readonly StepRecord[]) => {
    for (const step of written) {
      const at = steps.findIndex((s) => s.seq === step.seq);
      if (at >= 0) steps[at] = step;
      else steps.push(step);
    }
  };

  // Plan: which calls run, which are refused, and where the round stops before its end.
  const plan: Planned[] = [];
  let usage = input.usage;
  let stop: Exclude<CallsSettled, { kind: 'settled' | 'interrupted' }> | undefined;
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

  // The first commit: the lead and every write-ahead record, before anything runs.
  const fresh = plan.filter(
    (p): p is Extract<Planned, { kind: 'ahead' | 'after' }> =>
      p.kind === 'ahead' || p.kind === 'after',
  );
  for (const p of fresh) await ctx.hooks?.at('before_record', p.call);
  const ahead = fresh.filter((p) => p.kind === 'ahead');
  const stamps = new Map<string, ToolCallStep>();
  const lead = input.lead ?? [];
  if (lead.length > 0 || ahead.length > 0) {
    const written = await ctx.ledger.recordSteps(
      ctx.lease,
      [
        ...lead,
        ...ahead.map((p): LedgerWrite => ({
          kind: 'call',
          call: p.call,
          definition: p.definition,
          committed: toolEffect(p.definition).crossesCommitBoundary,
        })),
      ],
      input.leadUsage,
    );
    for (const w of written) keep(w.steps);
    for (const [i, p] of ahead.entries()) {
      const step = written[lead.length + i]?.steps[0];
      if (step?.kind === 'tool_call') stamps.set(p.call.id, step);
    }
  }

  // Then each call in order; their ends are the round's second commit.
  const ends: LedgerWrite[] = [];
  let running = input.usage;
  let mustKeep = false;
  const flush = async () => {
    mustKeep = false;
    if (ends.length === 0) return;
    const writing = ends.splice(0);
    keepWritten(writing, await ctx.ledger.recordSteps(ctx.lease, writing, usageJson(running)));
  };
  /** Keeps what `writing` wrote, and the call steps it ended as a read would now return them. */
  const keepWritten = (writing: readonly LedgerWrite[], written: readonly RecordedWrite[]) => {
    for (const [i, w] of written.entries()) {
      const entry = writing[i];
      const stamp = entry?.kind === 'observed' ? stamps.get(entry.callStep.callId) : undefined;
      if (entry?.kind === 'observed' && stamp && w.steps[0])
        keep([{ ...stamp, status: entry.status, finishedAt: w.steps[0].startedAt }]);
      keep(w.steps);
    }
  };
  // The ends prepared and kept as they will be written, for the driver's next write to carry.
  const hold = (): PendingEnds | undefined => {
    if (ends.length === 0) return undefined;
    const writing = ends.splice(0);
    const prepared = ctx.ledger.prepareSteps(writing);
    // Artifacts are read back by their id (a request's images): those are written now.
    if (prepared.batch.steps.some((w) => (w.artifacts ?? []).length > 0)) {
      ends.push(...writing);
      return undefined;
    }
    const next = steps.reduce((n, s) => Math.max(n, s.seq), 0) + 1;
    keepWritten(writing, prepared.recorded(provisionalSteps(ctx.lease.runId, next, prepared)));
    return { prepared, usage: usageJson(running) };
  };
  const skipRest = (from: number, why: string) => {
    for (const p of plan.slice(from)) {
      const stamp = stamps.get(p.call.id);
      if (stamp)
        ends.push({ kind: 'observed', callStep: stamp, result: notRun(why), status: 'refused' });
    }
  };
  /** A call found a meter spent: the calls after it (from `next`) are not run, and it ends. */
  const spent = async (next: number, metered: ToolUsage): Promise<CallsSettled> => {
    const exhausted = spentBy({ ...metered, exhausted: metered.exhausted ?? '' });
    skipRest(next, exhausted.reason);
    await flush();
    return { kind: 'budget_exhausted', exhaustion: exhausted, steps };
  };
  for (const [i, p] of plan.entries()) {
    if (input.signal.aborted) {
      await flush().catch(() => undefined);
      return { kind: 'interrupted' };
    }
    if (p.kind === 'resume') {
      await flush();
      const outcome = await resumeToolCall(ctx, p.step);
      keep(outcome.steps);
      if (outcome.kind === 'unknown_outcome') unknown.push(`${p.call.name} (${p.call.id})`);
      if (Object.keys(outcome.usage).length > 0) {
        running = addToolUsage(running, outcome.usage);
        await ctx.ledger.progress(ctx.lease, { usage: usageJson(running) });
      }
      if (outcome.usage.exhausted !== undefined) return spent(i + 1, outcome.usage);
      continue;
    }
    running = { ...running, toolCalls: running.toolCalls + 1 };
    if (p.kind === 'refuse') {
      ends.push({ kind: 'refused', call: p.call, definition: p.definition, refusal: p.refusal });
      continue;
    }
    // The wall clock, and meters an earlier call of the round spent, are read again here.
    const out = exhaustion(budget, running, input.startedAt, input.clock.now());
    if (out) {
      skipRest(i, out.reason);
      await flush();
      return { kind: 'budget_exhausted', exhaustion: out, steps };
    }
    // An end whose loss a resumed run could only report as unknown is made durable before the
    // next call starts: a crash in a later call never costs an earlier call its outcome.
    if (mustKeep) await flush();
    await ctx.hooks?.at('after_record', p.call);
    const stamp = stamps.get(p.call.id);
    const outcome: FreshOutcome = await runFreshCall(ctx, p.call, p.definition, p.args, stamp?.seq);
    if (outcome.kind === 'fatal' || outcome.kind === 'interrupted') {
      if (outcome.kind === 'fatal') ends.push(endOf(p, stamp, outcome.result, 'failed', outcome));
      // What the round's earlier calls came to is kept; the stop is the run's to settle.
      await flush().catch((error: unknown) => {
        if (outcome.kind === 'fatal') throw error;
      });
      throw outcome.error;
    }
    await ctx.hooks?.at('after_execute', p.call);
    running = addToolUsage(running, outcome.usage);
    ends.push(endOf(p, stamp, outcome.result, outcome.status, outcome));
    mustKeep = !rerunsOnResume(p.definition);
    // A metered call's usage is on record before the next call reads what is left of its meter.
    if (Object.keys(outcome.usage).length > 0) await flush();
    if (outcome.usage.exhausted !== undefined) return spent(i + 1, outcome.usage);
  }
  const pending = input.deferEnds && !stop ? hold() : undefined;
  await flush();
  for (const p of fresh) await ctx.hooks?.at('after_observation', p.call);
  // A parking call counts with what the calls before it metered.
  if (stop?.kind === 'parked')
    return { ...stop, usage: { ...running, toolCalls: running.toolCalls + 1 }, steps };
  if (stop) return { ...stop, steps };
  return { kind: 'settled', usage: running, unknown, steps, ...(pending ? { pending } : {}) };
}

/**
 * Whether a call whose end was lost is run again on resume (a replayable or internal call, or an
 * effect settled through the outbound machinery, which finds what it sent by its key), rather
 * than reported as unknown.
 */
function rerunsOnResume(definition: Definition): boolean {
  return toolEffect(definition).onResume === 'reexecute' || settlesThroughOutbox(definition);
}

/** A call's end as the round's second commit writes it. */
function endOf(
  p: Extract<Planned, { kind: 'ahead' | 'after' }>,
  stamp: ToolCallStep | undefined,
  result: Observation,
  status: 'completed' | 'unknown' | 'failed',
  outcome: { readonly attachments?: readonly ToolAttachment[]; readonly startedMsAgo: number },
): LedgerWrite {
  const attachments = outcome.attachments ? { attachments: outcome.attachments } : {};
  return stamp
    ? { kind: 'observed', callStep: stamp, result, status, ...attachments }
    : {
        kind: 'ran',
        call: p.call,
        definition: p.definition,
        result,
        status,
        startedMsAgo: outcome.startedMsAgo,
        ...attachments,
      };
}
