import { AGENT_FIELD } from '../operations/fields.ts';
import type { Observation } from '../../tool/observation.ts';
import { defineOperation } from '../operations/operation.ts';

/** One tool as an agent's turn would see it: offered, or withheld with why. */
export interface AgentTool {
  readonly name: string;
  readonly offered: boolean;
  /** Why it is not offered; null when it is. */
  readonly reason: string | null;
  /** `query`, `workspace`, `browser` or `effect`; null for a remote tool not read. */
  readonly class: string | null;
  /** The package (first-party) or remote server slug it comes from; null when unknown. */
  readonly origin: string | null;
  readonly source: 'package' | 'remote' | null;
}

export interface AgentTools {
  readonly agent: string;
  readonly audience: string;
  readonly tools: readonly AgentTool[];
}

export const agentToolsOperation = defineOperation({
  name: 'agents.tools',
  summary: "An agent's tools as its next turn would see them: offered, or withheld with the reason",
  description:
    'First-party tools and the tools of its remote MCP servers, under the policy a turn in a conversation of that audience applies: opt-outs, audiences, needs (secrets, a workspace backend, a web provider) and remote catalogs.',
  tag: 'tools',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent'],
    properties: {
      agent: AGENT_FIELD,
      audience: {
        enum: ['direct', 'shared'],
        description: "the conversation's audience (default direct)",
      },
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/tools' },
  cli: {
    command: ['tools', 'list'],
    print: (out: AgentTools) => {
      const width = Math.max(8, ...out.tools.map((t) => t.name.length));
      return [
        `${out.agent}'s tools in a ${out.audience} conversation:`,
        ...out.tools.map(
          (t) =>
            `  ${t.name.padEnd(width)}  ${(t.class ?? '?').padEnd(9)} ${t.offered ? 'offered' : `withheld: ${t.reason ?? '?'}`}`,
        ),
      ];
    },
  },
  async run(mesh, input): Promise<AgentTools> {
    const [{ requireAgent }, { turnPolicy }] = await Promise.all([
      import('../agents/agents.ts'),
      import('./policy.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const audience = input.audience ?? 'direct';
    const policy = await turnPolicy(mesh, agent.id, audience);
    const known = new Map(
      [...mesh.catalog.registry.definitions(), ...policy.registry.definitions()].map((d) => [
        d.tool.name,
        d,
      ]),
    );
    const describe = (name: string, reason: string | null): AgentTool => {
      const d = known.get(name);
      const remote = d?.origin.source === 'remote';
      return {
        name,
        offered: reason === null,
        reason,
        class: d?.class ?? null,
        origin: d ? d.origin.packageId : null,
        source: d ? (remote ? 'remote' : 'package') : null,
      };
    };
    const tools = [
      ...policy.registry.definitions().map((d) => describe(d.tool.name, null)),
      ...policy.withheld.map((w) => describe(w.name, w.reason)),
    ].sort((a, b) => a.name.localeCompare(b.name));
    return { agent: agent.name, audience, tools };
  },
});

/** What an operator's call came to, as the API and `--json` print it. */
export interface ToolCallAnswer {
  readonly run_id: string;
  readonly status: string;
  readonly reason: string | null;
  readonly observation: Observation | null;
}

export const callToolOperation = defineOperation({
  name: 'tools.call',
  summary:
    'Call one tool as the operator, through the executor, the commit boundary and the ledger',
  description:
    "The call is a run of its own (its id is in the answer) with one tool step, under the agent's grants, config and secrets. Arguments are validated as a model's would be: a refusal is the observation `invalid_input`, naming the field. The operator reaches any built-in tool, even one the model is not offered (a need unmet is then the call's own failure); a remote tool the agent's connections do not offer is refused `tool_withheld` with the reason.",
  tag: 'tools',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'tool', 'arguments'],
    properties: {
      agent: AGENT_FIELD,
      tool: { type: 'string', minLength: 1, maxLength: 200, description: 'the tool, by name' },
      arguments: {
        type: ['object', 'string'],
        maxLength: 1048576,
        description: 'the arguments: a JSON object ({} for none), or its text',
      },
    },
  },
  errors: ['agent_not_found', 'tool_withheld', 'tool_failed', 'run_interrupted'],
  http: { method: 'POST', path: '/api/agents/{agent}/tools/{tool}/call' },
  cli: {
    command: ['tools', 'call'],
    positionals: ['tool'],
    flags: { arguments: 'args' },
    print: (out: ToolCallAnswer) => {
      const o = out.observation;
      return [o ? `${o.kind === 'result' ? '' : `[${o.kind}] `}${o.text}` : '(no observation)'];
    },
    note: (out: ToolCallAnswer) =>
      `run ${out.run_id}: ${out.status}${out.reason ? ` (${out.reason})` : ''}`,
    exitCode: (out: ToolCallAnswer) => (out.observation?.kind === 'result' ? 0 : 1),
  },
  async run(mesh, input, caller): Promise<ToolCallAnswer> {
    const { callToolAsOperator } = await import('../runs/operator-call.ts');
    const result = await callToolAsOperator(mesh, {
      agent: input.agent,
      tool: input.tool,
      arguments:
        typeof input.arguments === 'string' ? input.arguments : JSON.stringify(input.arguments),
      operator: caller.actor,
    });
    return {
      run_id: result.runId,
      status: result.status,
      reason: result.reason,
      observation: result.observation ?? null,
    };
  },
});

/** One ranked operation of a search, as the API answers it. */
interface SearchResultAnswer {
  readonly name: string;
  readonly package?: string;
  readonly provider?: string;
  readonly score: number;
  readonly description: string;
}

export const searchToolsOperation = defineOperation({
  name: 'tools.search',
  summary:
    "Rank the operations the agent's tool_search would load for a need, best first (its own verbs aside)",
  tag: 'tools',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'q'],
    properties: {
      agent: AGENT_FIELD,
      q: {
        type: 'string',
        minLength: 1,
        maxLength: 500,
        description: 'what the agent needs, in words',
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        description: 'how many operations to return (5 unless given)',
      },
    },
  },
  errors: ['agent_not_found', 'invalid_search'],
  http: { method: 'GET', path: '/api/agents/{agent}/tools/search' },
  cli: {
    command: ['tools', 'search'],
    positionals: ['q'],
    print: (out: { results: readonly SearchResultAnswer[] }) =>
      out.results.map(
        (r) =>
          `${r.score.toFixed(2)}  ${r.name}  ${r.provider ?? r.package ?? ''}  ${r.description}`,
      ),
    note: (out: { results: readonly SearchResultAnswer[] }) =>
      out.results.length === 0 ? 'mesh tools search: nothing matched' : undefined,
  },
  async run(mesh, input): Promise<{ results: SearchResultAnswer[] }> {
    const { searchAgentTools } = await import('../agents/tool-search.ts');
    return { results: await searchAgentTools(mesh, input.agent, input.q, input.limit ?? 5) };
  },
});
