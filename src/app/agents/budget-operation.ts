import { AGENT_FIELD } from '../operations/fields.ts';
import { METERS, type Meter } from './budget-meters.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * An agent's budget profile as an operation of the catalog: what each of its runs may spend —
 * rounds, tool calls, tokens, wall clock, compute and browser session-minutes, and how long a
 * question it asks waits for an answer. A run copies the
 * profile when it is created; changing the profile never reaches a run under way. A meter the
 * profile does not set is the default. The bounds are documented in docs/budgets.md.
 */

/** A meter's input field. */
function meterField<const M extends Meter>(meter: M) {
  const { min, max, what } = METERS[meter];
  return {
    type: 'integer',
    minimum: min,
    maximum: max,
    description: `${what} (${min}-${max})`,
  } as const;
}

/** A duration as a flag says it, `90s`, `30m` or `2h`, in seconds. */
function durationSeconds(text: string, flag: string): number {
  const match = /^(\d{1,6})(s|m|h)$/.exec(text.trim());
  if (!match) throw new Error(`${flag} is a duration with its unit: 90s, 30m or 2h`);
  const scale = { s: 1, m: 60, h: 3600 }[match[2] as 's' | 'm' | 'h'];
  return Number(match[1]) * scale;
}

/** An agent's budget as the API answers it: every meter in force, and which the profile sets. */
export interface BudgetAnswer {
  readonly agent: string;
  readonly budget: Readonly<Record<Meter, number>>;
  /** The meters the profile sets; the others are the defaults. */
  readonly set: readonly Meter[];
}

const duration = (seconds: number) =>
  seconds % 3600 === 0
    ? `${seconds / 3600}h`
    : seconds % 60 === 0
      ? `${seconds / 60}m`
      : `${seconds}s`;

export const agentBudgetOperation = defineOperation({
  name: 'agents.budget',
  summary:
    "Set an agent's budget profile (what each of its runs may spend), or show it: a run copies the profile when it is created",
  tag: 'agents',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent'],
    properties: {
      agent: AGENT_FIELD,
      rounds: meterField('rounds'),
      tool_calls: meterField('tool_calls'),
      tokens: meterField('tokens'),
      wall_clock_seconds: meterField('wall_clock_seconds'),
      compute_seconds: meterField('compute_seconds'),
      session_minutes: meterField('session_minutes'),
      question_wait_seconds: meterField('question_wait_seconds'),
      reset: {
        type: 'boolean',
        description: 'clear the profile first: every meter not given here is the default again',
      },
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/budget' },
  cli: {
    command: ['agents', 'budget'],
    positionals: ['agent'],
    switches: ['reset'],
    flags: {
      wall_clock_seconds: 'wall-clock',
      compute_seconds: 'compute',
      question_wait_seconds: 'question-wait',
    },
    readers: {
      wall_clock_seconds: durationSeconds,
      compute_seconds: durationSeconds,
      question_wait_seconds: durationSeconds,
    },
    print: (out: BudgetAnswer) => {
      const b = out.budget;
      const mark = (m: Meter) => (out.set.includes(m) ? '' : ' (default)');
      return [
        `${out.agent}'s runs may spend:`,
        `  rounds           ${b.rounds}${mark('rounds')}`,
        `  tool calls       ${b.tool_calls}${mark('tool_calls')}`,
        `  tokens           ${b.tokens}${mark('tokens')}`,
        `  wall clock       ${duration(b.wall_clock_seconds)}${mark('wall_clock_seconds')}`,
        `  compute          ${duration(b.compute_seconds)}${mark('compute_seconds')}`,
        `  browser minutes  ${b.session_minutes}${mark('session_minutes')}`,
        `  question wait    ${duration(b.question_wait_seconds)}${mark('question_wait_seconds')}`,
      ];
    },
  },
  async run(mesh, input): Promise<BudgetAnswer> {
    const { setAgentBudget } = await import('./budget.ts');
    const changes: Partial<Record<Meter, number>> = {};
    for (const meter of Object.keys(METERS) as Meter[])
      if (input[meter] !== undefined) changes[meter] = input[meter];
    const { agent, budget, set } = await setAgentBudget(mesh, input.agent, {
      changes: Object.fromEntries(
        Object.entries(changes).map(([m, v]) => [
          METERS[m as Meter].budget,
          v * METERS[m as Meter].unit,
        ]),
      ),
      reset: input.reset === true,
    });
    const { budgetJson } = await import('./budget-meters.ts');
    const setMeters = (Object.keys(METERS) as Meter[]).filter((m) =>
      set.includes(METERS[m].budget),
    );
    return { agent: agent.name, budget: budgetJson(budget), set: setMeters };
  },
});
