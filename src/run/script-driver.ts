import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { ToolRuntime } from '../tool/context.ts';
import type { Registry } from '../tool/registry.ts';
import type { StepRecord } from '../store/runs.ts';
import { budgetFrom, exhaustion, usageFrom } from './budget.ts';
import type { DriveContext, RunDriver, RunEnd } from './driver.ts';
import { performToolCall, resumeToolCall, type CallHooks } from './tool-step.ts';

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
      const budget = budgetFrom(run.budget);
      const startedAt = run.startedAt ?? run.createdAt;
      const steps = await ledger.steps(run.id);
      const byCall = new Map<string, { call?: StepRecord; observed: boolean }>();
      const unknown: string[] = [];
      let recordedCalls = 0;
      for (const step of steps) {
        if (!step.callId) continue;
        const entry = byCall.get(step.callId) ?? { observed: false };
        if (step.kind === 'tool_call') {
          entry.call = step;
          recordedCalls++;
        }
        if (step.kind === 'observation') {
          entry.observed = true;
          if (step.observation?.['kind'] === 'unknown_outcome')
            unknown.push(`${step.toolName ?? '?'} (${step.callId})`);
        }
        byCall.set(step.callId, entry);
      }
      // The recorded steps are authoritative: a crash may have landed between a call and the
      // usage update that counted it.
      const stored = usageFrom(run.usage);
      let usage = { ...stored, toolCalls: Math.max(stored.toolCalls, recordedCalls) };
      for (const call of callsOf(run.checkpoint)) {
        if (ctx.signal.aborted) return { status: 'interrupted', reason: 'the worker stopped' };
        const seen = byCall.get(call.id);
        if (seen?.observed) continue;
        if (seen?.call) {
          const outcome = await resumeToolCall(stepCtx, seen.call);
          if (outcome.kind === 'unknown_outcome') unknown.push(`${call.name} (${call.id})`);
          continue;
        }
        const next = { ...usage, toolCalls: usage.toolCalls + 1 };
        const out = exhaustion(budget, next, startedAt, new Date());
        if (out) return { status: 'budget_exhausted', reason: out.reason };
        await performToolCall(stepCtx, call);
        usage = next;
        await ledger.progress(lease, { usage: { ...usage } });
      }
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
