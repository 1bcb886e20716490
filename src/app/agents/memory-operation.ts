import { AGENT_FIELD, listLimitField } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/** An agent's memory as the API answers it: what it says, its state, and where it came from. */
export interface MemoryAnswer {
  readonly id: string;
  readonly content: string;
  readonly status: 'active' | 'superseded' | 'forgotten';
  readonly supersedes: string | null;
  readonly superseded_by: string | null;
  readonly forgotten_reason: string | null;
  /** The run and call that wrote it, when a turn did (an operator's call names no message). */
  readonly run_id: string | null;
  readonly call_id: string | null;
  readonly source_message_id: string | null;
  readonly created_at: string;
  readonly retired_at: string | null;
}

export const agentMemoriesOperation = defineOperation({
  name: 'agents.memories',
  summary:
    "An agent's memories, newest first, in every state (active, superseded, forgotten), each with the run and call that wrote it",
  tag: 'agents',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent'],
    properties: {
      agent: AGENT_FIELD,
      status: {
        enum: ['active', 'superseded', 'forgotten'],
        description: 'only memories in this state',
      },
      limit: listLimitField(100),
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/memories' },
  cli: {
    command: ['agents', 'memories'],
    positionals: ['agent'],
    print: (out: { memories: readonly MemoryAnswer[] }) =>
      out.memories.length === 0
        ? ['No memories.']
        : out.memories.map(
            (m) =>
              `${m.id.slice(0, 8)}  ${m.status.padEnd(10)} ${m.created_at.slice(0, 19).replace('T', ' ')}  ${m.content}`,
          ),
  },
  async run(mesh, input): Promise<{ memories: MemoryAnswer[] }> {
    const [{ requireAgent }, { agentMemories }] = await Promise.all([
      import('./agents.ts'),
      import('./reads.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const rows = await agentMemories(mesh, agent.id, input.limit ?? 100, input.status);
    return {
      memories: rows.map((m) => ({
        id: m.id,
        content: m.content,
        status: m.status,
        supersedes: m.supersedes,
        superseded_by: m.supersededBy,
        forgotten_reason: m.forgottenReason,
        run_id: m.runId,
        call_id: m.callId,
        source_message_id: m.sourceMessageId,
        created_at: m.createdAt.toISOString(),
        retired_at: m.retiredAt?.toISOString() ?? null,
      })),
    };
  },
});
