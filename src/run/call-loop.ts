import type { Definition, ToolUsage } from '../tool/definition.ts';
import { toolEffect } from '../tool/effect.ts';
import { randomUUID } from 'node:crypto';
import { effectKey, settlesThroughOutbox } from '../tool/outbound.ts';
import type { BegunEffect } from './run-store.ts';
import type { Observation } from '../tool/observation.ts';
import { addToolUsage, exhaustion, usageJson, type Exhaustion } from './budget.ts';
import { provisionalSteps } from './ledger-writes.ts';
import type { LedgerWrite, RecordedWrite } from './ledger.ts';
import type { StepRecord, ToolCallStep } from './records.ts';
import {
  keepSteps,
  planCalls,
  type CallsInput,
  type CallsSettled,
  type PendingEnds,
  type Planned,
} from './call-plan.ts';

import { notRun, resumeToolCall, runFreshCall, type FreshOutcome } from './tool-step.ts';

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
  const { plan, stop, unknown, steps } = planCalls(input);
  const keep = (written: readonly StepRecord[]) => keepSteps(steps, written);

  // The first commit: the lead and every write-ahead record, before anything runs.
  const fresh = plan.filter(
    (p): p is Extract<Planned, { kind: 'ahead' | 'after' }> =>
      p.kind === 'ahead' || p.kind === 'after',
  );
  for (const p of fresh) await ctx.hooks?.at('before_record', p.call);
  const { stamps, begun } = await stampAhead(input, fresh, keep);

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
  const keepWritten = (writing: readonly LedgerWrite[], written: readonly RecordedWrite[]) =>
    keepEnds(keep, stamps, writing, written);
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
  const skipRest = (from: number, why: string) =>
    ends.push(...notRunEnds(plan.slice(from), stamps, begun, why));
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
    const outcome = await runPlanned(ctx, p, stamp, begun.get(p.call.id));
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
    // An effect delivered is marked so with the call's end: a crash in a later call must not
    // leave it `delivering` (unknown to a provider that cannot be asked).
    mustKeep = !rerunsOnResume(p.definition) || outcome.delivered.length > 0;
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
 * The round's first commit: `lead` (its model request and response) and the write-ahead record of
 * every call recorded ahead, before any call runs. Returns those records by call id.
 */
async function stampAhead(
  input: CallsInput,
  fresh: readonly Extract<Planned, { kind: 'ahead' | 'after' }>[],
  keep: (written: readonly StepRecord[]) => void,
): Promise<{ stamps: Map<string, ToolCallStep>; begun: Map<string, BegunEffect> }> {
  const { ctx } = input;
  const ahead = fresh.filter((p) => p.kind === 'ahead');
  const stamps = new Map<string, ToolCallStep>();
  const begun = new Map<string, BegunEffect>();
  const lead = input.lead ?? [];
  if (lead.length === 0 && ahead.length === 0) return { stamps, begun };
  // The stamps' numbers as they will be written (the lease holder is the run's only writer): a
  // declared effect is recorded begun under its stamp's number in the same commit.
  const next = input.steps.reduce((n, s) => Math.max(n, s.seq), 0) + 1 + lead.length;
  const written = await ctx.ledger.recordSteps(
    ctx.lease,
    [
      ...lead,
      ...ahead.map((p, i): LedgerWrite => {
        const begins = begunEffect(ctx.lease.runId, next + i, p);
        if (begins) begun.set(p.call.id, begins);
        return {
          kind: 'call',
          call: p.call,
          definition: p.definition,
          committed: toolEffect(p.definition).crossesCommitBoundary,
          ...(begins ? { begins } : {}),
        };
      }),
    ],
    input.leadUsage,
  );
  for (const w of written) keep(w.steps);
  for (const [i, p] of ahead.entries()) {
    const step = written[lead.length + i]?.steps[0];
    if (step?.kind === 'tool_call') stamps.set(p.call.id, step);
    // Recorded only where the stamp got the number it was keyed by (the same statement's check).
    if (step?.seq !== begun.get(p.call.id)?.stepSeq) begun.delete(p.call.id);
  }
  return { stamps, begun };
}

/**
 * Runs a planned call after its stamp, if it has one, with its declared effect when the stamp's
 * commit recorded it begun (the stamp got the number the round expected; otherwise the outbox
 * records it).
 */
function runPlanned(
  ctx: CallsInput['ctx'],
  p: Extract<Planned, { kind: 'ahead' | 'after' }>,
  stamp: ToolCallStep | undefined,
  begun: BegunEffect | undefined,
): Promise<FreshOutcome> {
  const recorded = begun ? new Map([[begun.idempotencyKey, begun.id]]) : undefined;
  return runFreshCall(ctx, p.call, p.definition, p.args, stamp?.seq, recorded);
}

/** A call's declared effect as its stamp (step `seq`) records it begun; undefined without one. */
function begunEffect(
  runId: string,
  seq: number,
  p: Extract<Planned, { kind: 'ahead' | 'after' }>,
): BegunEffect | undefined {
  const declare = p.definition.declaredEffect;
  if (!declare || !settlesThroughOutbox(p.definition)) return undefined;
  const effect = declare(p.args);
  return {
    ...effect,
    id: randomUUID(),
    idempotencyKey: effectKey(runId, seq, p.call.id, effect.name).key,
    stepSeq: seq,
    callId: p.call.id,
    toolName: p.definition.tool.name,
  };
}

/**
 * The ends of stamped calls the round will not run: each not run, and a declared effect its stamp
 * recorded begun withdrawn (never sent, and never will be).
 */
function notRunEnds(
  planned: readonly Planned[],
  stamps: ReadonlyMap<string, ToolCallStep>,
  begun: ReadonlyMap<string, BegunEffect>,
  why: string,
): LedgerWrite[] {
  return planned.flatMap((p): LedgerWrite[] => {
    const stamp = stamps.get(p.call.id);
    if (!stamp) return [];
    const effect = begun.get(p.call.id);
    return [
      {
        kind: 'observed',
        callStep: stamp,
        result: notRun(why),
        status: 'refused',
        ...(effect ? { withdrawn: [effect.id] } : {}),
      },
    ];
  });
}

/** Keeps what `writing` wrote, and the call steps it ended as a read would now return them. */
function keepEnds(
  keep: (written: readonly StepRecord[]) => void,
  stamps: ReadonlyMap<string, ToolCallStep>,
  writing: readonly LedgerWrite[],
  written: readonly RecordedWrite[],
): void {
  for (const [i, w] of written.entries()) {
    const entry = writing[i];
    const stamp = entry?.kind === 'observed' ? stamps.get(entry.callStep.callId) : undefined;
    if (entry?.kind === 'observed' && stamp && w.steps[0])
      keep([{ ...stamp, status: entry.status, finishedAt: w.steps[0].startedAt }]);
    keep(w.steps);
  }
}

/**
 * Whether a call whose end was lost is run again on resume (a replayable or internal call, or an
 * effect settled through the outbound machinery, which finds what it sent by its key), rather
 * than reported as unknown.
 */
function rerunsOnResume(definition: Definition): boolean {
  return toolEffect(definition).onResume === 'reexecute' || settlesThroughOutbox(definition);
}

/** A call's end as the round's second commit writes it, with the effects it delivered. */
function endOf(
  p: Extract<Planned, { kind: 'ahead' | 'after' }>,
  stamp: ToolCallStep | undefined,
  result: Observation,
  status: 'completed' | 'unknown' | 'failed',
  outcome: Extract<FreshOutcome, { kind: 'done' | 'fatal' }>,
): LedgerWrite {
  const attachments = outcome.attachments ? { attachments: outcome.attachments } : {};
  const delivered = outcome.delivered.length > 0 ? { delivered: outcome.delivered } : {};
  return stamp
    ? { kind: 'observed', callStep: stamp, result, status, ...attachments, ...delivered }
    : {
        kind: 'ran',
        call: p.call,
        definition: p.definition,
        result,
        status,
        startedMsAgo: outcome.startedMsAgo,
        ...attachments,
        ...delivered,
      };
}
