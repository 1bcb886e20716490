import { defineOperation } from '../operations/operation.ts';

/** What runs cost over the last days, across agents. */
export interface UsageAnswer {
  readonly days: number;
  /** One row per day and agent that had runs, oldest first (days are UTC dates). */
  readonly by_day: readonly {
    readonly day: string;
    readonly agent: string;
    readonly runs: number;
    readonly tokens: number;
    readonly tool_calls: number;
  }[];
  /** Runs that did not succeed, by how they ended and why, commonest first. */
  readonly failures: readonly {
    readonly status: string;
    readonly reason: string;
    readonly runs: number;
  }[];
  /** The slowest tools by their 95th percentile call time, slowest first. */
  readonly slowest_tools: readonly {
    readonly tool: string;
    readonly calls: number;
    readonly p50_ms: number;
    readonly p95_ms: number;
  }[];
}

export const usageOperation = defineOperation({
  name: 'usage.show',
  summary:
    'What runs cost over the last days, across agents: runs, tokens and tool calls per day per agent, failures by reason, and the slowest tools (p50/p95)',
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: [],
    properties: {
      days: {
        type: 'integer',
        minimum: 1,
        maximum: 90,
        description: 'how many days back, today included (1-90, default 14)',
      },
    },
  },
  errors: [],
  http: { method: 'GET', path: '/api/usage' },
  cli: {
    command: ['runs', 'usage'],
    print: (u: UsageAnswer) => [
      `Over the last ${u.days} days:`,
      ...(u.by_day.length === 0
        ? ['  no runs']
        : u.by_day.map(
            (d) =>
              `  ${d.day}  ${d.agent.padEnd(16)} ${String(d.runs).padStart(5)} runs ${String(d.tokens).padStart(10)} tokens ${String(d.tool_calls).padStart(6)} tool calls`,
          )),
      'Failures:',
      ...(u.failures.length === 0
        ? ['  none']
        : u.failures.map((f) => `  ${String(f.runs).padStart(5)}  ${f.status}: ${f.reason}`)),
      'Slowest tools (p50 / p95):',
      ...(u.slowest_tools.length === 0
        ? ['  no tool calls']
        : u.slowest_tools.map(
            (t) => `  ${t.tool.padEnd(32)} ${t.p50_ms} ms / ${t.p95_ms} ms  (${t.calls} calls)`,
          )),
    ],
  },
  async run(mesh, input): Promise<UsageAnswer> {
    const { usageByDay, failuresByReason, slowestTools } = await import('./usage.ts');
    const days = input.days ?? 14;
    const [byDay, failures, slowest] = await Promise.all([
      usageByDay(mesh, days),
      failuresByReason(mesh, days, 10),
      slowestTools(mesh, days, 10),
    ]);
    return {
      days,
      by_day: byDay.map((d) => ({
        day: d.day,
        agent: d.agent,
        runs: d.runs,
        tokens: d.tokens,
        tool_calls: d.toolCalls,
      })),
      failures,
      slowest_tools: slowest.map((t) => ({
        tool: t.tool,
        calls: t.calls,
        p50_ms: t.p50Ms,
        p95_ms: t.p95Ms,
      })),
    };
  },
});
