import type { DeliveryState } from '../../outbound/records.ts';
import { AGENT_FILTER_FIELD, listLimitField } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/** The delivery states an outbound event passes through, as filters name them. */
export const DELIVERY_STATES = [
  'pending',
  'delivering',
  'delivered',
  'failed',
  'unknown',
] as const satisfies readonly DeliveryState[];

/** Where each effect went, across agents: as runs.show shows a run's, with its run and agent. */
export interface OutboundListing {
  readonly events: readonly (Record<string, unknown> & {
    readonly run_id: string;
    readonly agent: string;
    readonly kind: string;
    readonly target: string;
    readonly state: string;
    readonly attempts: number;
    readonly createdAt: string;
  })[];
}

export const listOutboundOperation = defineOperation({
  name: 'runs.effects',
  summary:
    'Outbound events across agents, newest first: each effect and reply a run sent, where it went, its delivery state and attempts',
  tag: 'runs',
  input: {
    type: 'object',
    additionalProperties: false,
    required: [],
    properties: {
      agent: AGENT_FILTER_FIELD,
      state: {
        enum: DELIVERY_STATES,
        description: 'only events in this delivery state',
      },
      limit: listLimitField(100),
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/outbound' },
  cli: {
    command: ['runs', 'effects'],
    print: (out: OutboundListing) =>
      out.events.length === 0
        ? ['No outbound events.']
        : out.events.map(
            (e) =>
              `${e.createdAt.slice(0, 19).replace('T', ' ')}  ${e.agent.padEnd(16)} ${e.kind.padEnd(28)} ${e.state.padEnd(10)} ${e.attempts} attempt(s)  ${e.target}  run ${e.run_id.slice(0, 8)}`,
          ),
  },
  async run(mesh, input): Promise<OutboundListing> {
    const [{ requireAgent }, { outboundEvents }, { effectJson }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./reads.ts'),
      import('../views.ts'),
    ]);
    const agent = input.agent === undefined ? undefined : await requireAgent(mesh, input.agent);
    const rows = await outboundEvents(mesh, {
      ...(agent ? { agentId: agent.id } : {}),
      ...(input.state ? { state: input.state } : {}),
      limit: input.limit ?? 100,
    });
    return {
      events: rows.map((e) => ({
        ...(effectJson(e) as OutboundListing['events'][number]),
        run_id: e.runId,
        agent: e.agent,
      })),
    };
  },
});
