import { isoText, runSummaryJson } from '../views.ts';
import { defineOperation } from '../operations/operation.ts';
import { shortRunId } from './run-ref.ts';

/** The statuses a run can be in, as filters name them. */
export const RUN_STATUSES = [
  'queued',
  'running',
  'awaiting_input',
  'succeeded',
  'failed',
  'interrupted',
  'budget_exhausted',
] as const;

/** A run in a listing: its summary, with its short id and its agent's name. */
export interface RunListing {
  readonly runs: readonly (Record<string, unknown> & {
    readonly run_id: string;
    readonly short_id: string;
    readonly agent: string;
    readonly status: string;
    readonly reason: string | null;
    readonly created_at: Date | string;
    readonly finished_at: Date | string | null;
  })[];
}

export const listRunsOperation = defineOperation({
  name: 'runs.list',
  summary: 'List runs, newest first, across agents or of one agent, in any status or one',
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: [],
    properties: {
      agent: { type: 'string', minLength: 1, maxLength: 200, description: 'an agent name or id' },
      status: { enum: RUN_STATUSES, description: `only runs in this status` },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: 500,
        description: 'how many to list (1-500, default 50)',
      },
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/runs' },
  cli: {
    command: ['runs', 'list'],
    print: (out: RunListing) =>
      out.runs.length === 0
        ? ['No runs.']
        : out.runs.map(
            (r) =>
              `${r.short_id}  ${r.agent.padEnd(16)} ${r.status.padEnd(16)} ${isoText(r.created_at)}${r.reason ? `  ${r.reason}` : ''}`,
          ),
  },
  async run(mesh, input): Promise<RunListing> {
    const [{ requireAgent }, { listRuns }, { listAgents }] = await Promise.all([
      import('../agents.ts'),
      import('../../store/run-reads.ts'),
      import('../queries.ts'),
    ]);
    const agent = input.agent === undefined ? undefined : await requireAgent(mesh, input.agent);
    const [runs, agents] = await Promise.all([
      listRuns(mesh.db, {
        ...(agent ? { agentId: agent.id } : {}),
        ...(input.status === undefined ? {} : { status: input.status }),
        limit: input.limit ?? 50,
      }),
      agent ? Promise.resolve([agent]) : listAgents(mesh),
    ]);
    const names = new Map(agents.map((a) => [a.id, a.name]));
    return {
      runs: runs.map((run) => ({
        ...(runSummaryJson(run) as RunListing['runs'][number]),
        short_id: shortRunId(run.id),
        agent: names.get(run.agentId) ?? run.agentId,
      })),
    };
  },
});
