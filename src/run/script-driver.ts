import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { ToolRuntime } from '../tool/context.ts';
import type { Registry } from '../tool/registry.ts';
import { systemClock, type Clock } from '../tool/clock.ts';
import { budgetFrom, usageFrom } from './budget.ts';
import { settleCalls } from './call-loop.ts';
import type { DriveContext, RunDriver, RunEnd } from './driver.ts';
import type { CallHooks } from './tool-step.ts';

/** A run whose program is a fixed list of tool calls: operator invocations, demos, crash tests. */
export interface ScriptCheckpoint {
  readonly kind: 'script';
  readonly calls: readonly ToolCall[];
}

export function scriptCheckpoint(calls: readonly ToolCall[]): JsonObject {
  return {
    kind: 'script',
    calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
  };
}

function callsOf(checkpoint: JsonObject): ToolCall[] {
  const calls = checkpoint['calls'];
  if (checkpoint['kind'] !== 'script' || !Array.isArray(calls)) return [];
  return calls.map((c) => {
    const o = c as Record<string, unknown>;
    return { id: String(o['id']), name: String(o['name']), arguments: String(o['arguments']) };
  });
}

/** Builds the runtime and the policy-scoped registry for a run. */
export interface ScriptEnvironment {
  registryFor(run: DriveContext['run']): Registry | Promise<Registry>;
  runtimeFor(run: DriveContext['run'], signal: AbortSignal): ToolRuntime | Promise<ToolRuntime>;
  readonly hooks?: CallHooks;
  /** Where budgets read the time; the system clock when omitted. */
  readonly clock?: Clock;
}

/**
 * Runs a script's calls in order. On resume, calls with an observation are skipped, a started
 * call without one is resumed by the commit-boundary rule, and the run's reason records every
 * outcome that had to be reported as unknown.
 */
export function scriptDriver(env: ScriptEnvironment): RunDriver {
  return {
    kind: 'script',
    async drive(ctx: DriveContext): Promise<RunEnd> {
      const { ledger, lease, run } = ctx;
      const registry = await env.registryFor(run);
      const stepCtx = {
        ledger,
        lease,
        registry,
        runtime: await env.runtimeFor(run, ctx.signal),
        ...(env.hooks ? { hooks: env.hooks } : {}),
      };
      const steps = await ledger.steps(run.id);
      // The recorded steps are authoritative: a crash may have landed between a call and the
      // usage update that counted it.
      const stored = usageFrom(run.usage);
      const recordedCalls = steps.filter((s) => s.kind === 'tool_call').length;
      const settled = await settleCalls({
        ctx: stepCtx,
        calls: callsOf(run.checkpoint),
        steps,
        usage: { ...stored, toolCalls: Math.max(stored.toolCalls, recordedCalls) },
        budget: budgetFrom(run.budget),
        startedAt: run.startedAt ?? run.createdAt,
        clock: env.clock ?? systemClock,
        signal: ctx.signal,
      });
      if (settled.kind === 'interrupted')
        return { status: 'interrupted', reason: 'the worker stopped' };
      if (settled.kind === 'budget_exhausted')
        return { status: 'budget_exhausted', reason: settled.exhaustion.reason };
      // Only a turn offers a parking tool: a script has no conversation to ask.
      if (settled.kind === 'parked')
        return { status: 'failed', reason: `${settled.call.name} needs a conversation to ask` };
      const { unknown } = settled;
      return {
        status: 'succeeded',
        reason:
          unknown.length === 0
            ? null
            : `resumed after an interruption; outcome unknown for ${unknown.join(', ')}`,
      };
    },
  };
}
