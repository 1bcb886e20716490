import type { JsonObject } from '../model/json.ts';
import type { ToolUsage } from '../tool/definition.ts';

/** The meters a run may spend. Fixed when the run is created; nothing raises them mid-run. */
export interface Budget {
  readonly maxRounds: number;
  readonly maxToolCalls: number;
  readonly maxTokens: number;
  readonly wallClockMs: number;
  /** Compute the run's workspaces may be metered, in seconds (the execution layer's meter). */
  readonly maxComputeSeconds: number;
  /** Minutes the run's browser sessions may be held (the browser layer's meter). */
  readonly maxSessionMinutes: number;
  /**
   * How long a question the run asks its conversation (request_input) waits for an answer before
   * it expires and ends the run. Waiting is not counted on the wall clock.
   */
  readonly questionWaitMs: number;
  /**
   * Calls the run may make to each query provider (by name), retries included: each granted
   * provider's ceiling as it was when the run was created.
   */
  readonly providerCalls: Readonly<Record<string, number>>;
}

/** What a run has spent so far. */
export interface RunUsage {
  readonly rounds: number;
  readonly toolCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Compute the run's workspace commands were metered by their backend, in milliseconds. */
  readonly computeMs: number;
  /** Time the run's browser sessions were held, in milliseconds, as its calls metered it. */
  readonly sessionMs: number;
  /** Time the run spent parked on a question, in milliseconds: not counted on the wall clock. */
  readonly parkedMs: number;
  /**
   * Requests made to each query provider (by provider name), retries included. Each provider's
   * per-run ceiling is its own row's; the call that finds it spent ends the run.
   */
  readonly providerCalls: Readonly<Record<string, number>>;
}

export const DEFAULT_BUDGET: Budget = Object.freeze({
  maxRounds: 3,
  maxToolCalls: 16,
  maxTokens: 200_000,
  wallClockMs: 5 * 60_000,
  maxComputeSeconds: 10 * 60,
  maxSessionMinutes: 30,
  questionWaitMs: 24 * 60 * 60_000,
  providerCalls: Object.freeze({}),
});

/**
 * The most an operator may give one run of each meter: a run is a unit of work an operator
 * follows, not a standing process. Documented in docs/budgets.md.
 */
export const BUDGET_BOUNDS: Budget = Object.freeze({
  maxRounds: 200,
  maxToolCalls: 1_000,
  maxTokens: 20_000_000,
  wallClockMs: 24 * 60 * 60_000,
  maxComputeSeconds: 24 * 60 * 60,
  maxSessionMinutes: 24 * 60,
  questionWaitMs: 30 * 24 * 60 * 60_000,
  providerCalls: Object.freeze({}),
});

export const ZERO_USAGE: RunUsage = Object.freeze({
  rounds: 0,
  toolCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  computeMs: 0,
  sessionMs: 0,
  parkedMs: 0,
  providerCalls: Object.freeze({}),
});

/** Which budget ran out, and the reason a run records for it. */
export interface Exhaustion {
  readonly budget: keyof Budget;
  readonly reason: string;
}

function positiveInteger(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/** Reads a stored budget; a missing or malformed meter falls back to the default. */
export function budgetFrom(json: JsonObject): Budget {
  return Object.freeze({
    maxRounds: positiveInteger(json['maxRounds'], DEFAULT_BUDGET.maxRounds),
    maxToolCalls: positiveInteger(json['maxToolCalls'], DEFAULT_BUDGET.maxToolCalls),
    maxTokens: positiveInteger(json['maxTokens'], DEFAULT_BUDGET.maxTokens),
    wallClockMs: positiveInteger(json['wallClockMs'], DEFAULT_BUDGET.wallClockMs),
    maxComputeSeconds: positiveInteger(json['maxComputeSeconds'], DEFAULT_BUDGET.maxComputeSeconds),
    maxSessionMinutes: positiveInteger(json['maxSessionMinutes'], DEFAULT_BUDGET.maxSessionMinutes),
    questionWaitMs: positiveInteger(json['questionWaitMs'], DEFAULT_BUDGET.questionWaitMs),
    providerCalls: providerCallsFrom(json['providerCalls']),
  });
}

export function usageFrom(json: JsonObject): RunUsage {
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
  return Object.freeze({
    rounds: n(json['rounds']),
    toolCalls: n(json['toolCalls']),
    inputTokens: n(json['inputTokens']),
    outputTokens: n(json['outputTokens']),
    computeMs: n(json['computeMs']),
    sessionMs: n(json['sessionMs']),
    parkedMs: n(json['parkedMs']),
    providerCalls: providerCallsFrom(json['providerCalls']),
  });
}

function providerCallsFrom(value: unknown): Readonly<Record<string, number>> {
  const out: Record<string, number> = {};
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [name, calls] of Object.entries(value))
      if (typeof calls === 'number' && Number.isSafeInteger(calls) && calls > 0) out[name] = calls;
  }
  return Object.freeze(out);
}

/** `usage` with what one tool call metered beyond itself added. */
export function addToolUsage(usage: RunUsage, metered: ToolUsage): RunUsage {
  const providerCalls = { ...usage.providerCalls };
  for (const [name, calls] of Object.entries(metered.providerCalls ?? {}))
    providerCalls[name] = (providerCalls[name] ?? 0) + calls;
  return {
    ...usage,
    computeMs: usage.computeMs + (metered.computeMs ?? 0),
    sessionMs: usage.sessionMs + (metered.sessionMs ?? 0),
    providerCalls,
  };
}

/**
 * Whether spending `next` (the usage after the step about to be taken) would exceed the budget, or
 * the wall clock has run out. Checked before each step, so a run never exceeds a meter.
 */
export function exhaustion(
  budget: Budget,
  next: RunUsage,
  startedAt: Date,
  now: Date,
): Exhaustion | undefined {
  if (next.rounds > budget.maxRounds) {
    return {
      budget: 'maxRounds',
      reason: `budget exhausted: max rounds (${budget.maxRounds}) reached`,
    };
  }
  if (next.toolCalls > budget.maxToolCalls) {
    return {
      budget: 'maxToolCalls',
      reason: `budget exhausted: max tool calls (${budget.maxToolCalls}) reached`,
    };
  }
  if (next.inputTokens + next.outputTokens > budget.maxTokens) {
    return {
      budget: 'maxTokens',
      reason: `budget exhausted: max tokens (${budget.maxTokens}) reached`,
    };
  }
  if (next.computeMs >= budget.maxComputeSeconds * 1000) {
    return {
      budget: 'maxComputeSeconds',
      reason: `budget exhausted: compute (${formatSeconds(budget.maxComputeSeconds)}) spent`,
    };
  }
  if (next.sessionMs >= budget.maxSessionMinutes * 60_000) {
    return {
      budget: 'maxSessionMinutes',
      reason: `budget exhausted: browser session time (${formatSeconds(budget.maxSessionMinutes * 60)}) spent`,
    };
  }
  if (now.getTime() - startedAt.getTime() - next.parkedMs > budget.wallClockMs) {
    return {
      budget: 'wallClockMs',
      reason: `budget exhausted: wall clock (${formatSeconds(budget.wallClockMs / 1000)}) ran out`,
    };
  }
  return undefined;
}

/** Seconds as an operator writes them: `45 s`, `30 min`, `2 h`, `90 s`. */
export function formatSeconds(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${Math.round(seconds * 1000) / 1000} s`;
}

/** A run's usage as its record stores it. */
export function usageJson(u: RunUsage): JsonObject {
  return { ...u };
}
