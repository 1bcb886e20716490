import { BUDGET_BOUNDS, type Budget } from '../../run/budget.ts';

/*
 * A run's budget meters as the API names them (`rounds`, `wall_clock_seconds`, …), with the bounds
 * an operator may set them within (docs/budgets.md) and the unit each is stored in.
 */

/** The profile's meters as the API names them, with their defaults and bounds. */
export const METERS = {
  rounds: {
    budget: 'maxRounds',
    min: 1,
    max: BUDGET_BOUNDS.maxRounds,
    unit: 1,
    what: 'model requests per run',
  },
  tool_calls: {
    budget: 'maxToolCalls',
    min: 1,
    max: BUDGET_BOUNDS.maxToolCalls,
    unit: 1,
    what: 'tool calls per run',
  },
  tokens: {
    budget: 'maxTokens',
    min: 1_000,
    max: BUDGET_BOUNDS.maxTokens,
    unit: 1,
    what: 'model tokens (input and output) per run',
  },
  wall_clock_seconds: {
    budget: 'wallClockMs',
    min: 1,
    max: BUDGET_BOUNDS.wallClockMs / 1000,
    unit: 1_000,
    what: 'seconds from the run’s start to its end',
  },
  compute_seconds: {
    budget: 'maxComputeSeconds',
    min: 1,
    max: BUDGET_BOUNDS.maxComputeSeconds,
    unit: 1,
    what: 'workspace compute-seconds per run',
  },
  session_minutes: {
    budget: 'maxSessionMinutes',
    min: 1,
    max: BUDGET_BOUNDS.maxSessionMinutes,
    unit: 1,
    what: 'browser session-minutes per run',
  },
  question_wait_seconds: {
    budget: 'questionWaitMs',
    min: 1,
    max: BUDGET_BOUNDS.questionWaitMs / 1000,
    unit: 1_000,
    what: 'seconds a question the run asks waits for an answer before it expires',
  },
} as const;

/** A meter, as the API names it. */
export type Meter = keyof typeof METERS;

/** A budget as the API answers it: every meter in its API unit. */
export function budgetJson(budget: Budget): Record<Meter, number> {
  const out = {} as Record<Meter, number>;
  for (const [meter, spec] of Object.entries(METERS) as [Meter, (typeof METERS)[Meter]][])
    out[meter] = budget[spec.budget] / spec.unit;
  return out;
}

/** A run's budget and usage as stored, read for the faces (the run layer's readers). */
export { budgetFrom, formatSeconds, usageFrom } from '../../run/budget.ts';
