import { AGENT_FIELD, AGENT_INPUT } from '../operations/fields.ts';
import { InvalidInputError } from '../operations/input.ts';
import { defineOperation } from '../operations/operation.ts';
import { isoText } from '../views.ts';
import { agentNamed, BINDING, type CheckAnswer } from './catalog-operations.ts';
import { PROVIDER_FIELD } from './provider-operations.ts';

/*
 * An agent's connections to remote MCP servers, as operations of the catalog: connecting with the
 * agent's own token or with OAuth, and listing and dropping connections. What a connection
 * offers is held in ./catalog-operations.ts.
 */

/** A connection as the API answers it (`bindingJson`). */
export interface ConnectionAnswer extends Record<string, unknown> {
  readonly provider: string;
  readonly auth: string;
  readonly excluded_tools: readonly string[];
  readonly audiences: readonly string[] | null;
  readonly conversation_ids: readonly string[] | null;
  readonly catalog_checked_at: string | null;
  readonly catalog_error: string | null;
}

export const listConnectionsOperation = defineOperation({
  name: 'mcp.connections',
  summary: "An agent's connections to remote MCP servers",
  tag: 'mcp',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/mcp' },
  cli: {
    command: ['mcp', 'connections'],
    print: (out: { connections: readonly ConnectionAnswer[] }, input) =>
      out.connections.length === 0
        ? [`${String(input['agent'])} has no MCP connections.`]
        : out.connections.map(
            (c) =>
              `${c.provider}  ${c.auth}${c.excluded_tools.length ? `  excluded: ${c.excluded_tools.join(', ')}` : ''}${c.catalog_error ? `  last check failed at ${c.catalog_checked_at === null ? 'an unknown time' : isoText(c.catalog_checked_at)}: ${c.catalog_error}` : ''}`,
          ),
  },
  async run(mesh, input): Promise<{ connections: ConnectionAnswer[] }> {
    const [{ agentConnections }, { bindingJson }] = await Promise.all([
      import('./connections.ts'),
      import('./views.ts'),
    ]);
    const agent = await agentNamed(mesh, input.agent);
    const rows = await agentConnections(mesh, agent);
    return {
      connections: rows.map((b) => JSON.parse(JSON.stringify(bindingJson(b))) as ConnectionAnswer),
    };
  },
});

/** What connecting found: the connection, its catalog read, and what cannot be offered. */
export interface ConnectAnswer {
  readonly connection: ConnectionAnswer;
  readonly check: CheckAnswer;
  readonly withheld: readonly { readonly tool: string; readonly reason: string }[];
}

export const connectOperation = defineOperation({
  name: 'mcp.connect',
  summary:
    "Connect an agent with its own account's bearer token (write-only; stored on the binding) and read the catalog",
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'provider', 'value'],
    properties: {
      agent: AGENT_FIELD,
      provider: PROVIDER_FIELD,
      value: { type: 'string', minLength: 1, maxLength: 65536, description: 'the bearer token' },
    },
  },
  errors: [
    'agent_not_found',
    'tool_provider_not_found',
    'invalid_token',
    'secret_value_invalid',
    'mcp_transport_failed',
  ],
  http: { method: 'PUT', path: '/api/agents/{agent}/mcp/{provider}/token' },
  cli: {
    command: ['mcp', 'connect'],
    files: { value: 'token-file' },
    print: (out: ConnectAnswer, input) => {
      const listed = out.check.added.length + out.check.changed.length;
      const pages = `${out.check.pages} page${out.check.pages === 1 ? '' : 's'}`;
      return [
        `Connected ${String(input['agent'])} to ${out.connection.provider}: ${listed} tools, ${listed - out.withheld.length} usable (${pages}${out.check.stoppedBecause ? `; stopped: ${out.check.stoppedBecause}` : ''}).`,
        ...out.withheld.map((w) => `  withheld ${w.tool}: ${w.reason}`),
      ];
    },
  },
  async run(mesh, input): Promise<ConnectAnswer> {
    const [{ connectAgent }, { catalogView, withheldTools }, { bindingJson }] = await Promise.all([
      import('./connections.ts'),
      import('./catalog.ts'),
      import('./views.ts'),
    ]);
    const agent = await agentNamed(mesh, input.agent);
    const { binding, check } = await connectAgent(mesh, agent, input.provider, input.value);
    // What cannot be offered is said at once, not first in a chat run's withheld list.
    const view = await catalogView(mesh, agent, input.provider);
    return {
      connection: JSON.parse(
        JSON.stringify(bindingJson({ ...binding, provider: view.provider })),
      ) as ConnectionAnswer,
      check,
      withheld: withheldTools(view.tools),
    };
  },
});

export const startOAuthOperation = defineOperation({
  name: 'mcp.oauth-start',
  summary:
    'Start connecting an agent with OAuth (authorization code, PKCE S256, resource indicator): answers the URL to send the operator’s browser to; the server redirects back to this Mesh to finish',
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'provider'],
    properties: {
      agent: AGENT_FIELD,
      provider: PROVIDER_FIELD,
      origin: {
        type: 'string',
        pattern: '^https?://[^/?#]+$',
        maxLength: 2000,
        description:
          "this Mesh's origin as the operator's browser reaches it, for the redirect back (default: the origin the request came to)",
      },
    },
  },
  errors: ['agent_not_found', 'tool_provider_not_found', 'mcp_transport_failed'],
  http: { method: 'POST', path: '/api/agents/{agent}/mcp/{provider}/oauth' },
  cli: {
    notOnCli:
      '`mesh mcp oauth` starts it with the --server origin, prints the URL and waits on mcp.oauth-status',
  },
  async run(mesh, input, caller): Promise<{ authorization_url: string }> {
    const origin = input.origin ?? caller.origin;
    if (origin === undefined)
      throw new InvalidInputError(
        "name this Mesh's origin, which the authorization server redirects back to",
        'input.origin',
      );
    const { startOAuthConnection } = await import('./connections.ts');
    const agent = await agentNamed(mesh, input.agent);
    const { authorizationUrl } = await startOAuthConnection(mesh, agent, input.provider, origin);
    return { authorization_url: authorizationUrl.toString() };
  },
});

/** Where an OAuth connection stands. */
export interface OAuthStatusAnswer {
  /** An authorization was started and has not come back. */
  readonly pending: boolean;
  readonly connected: boolean;
  /** The tools the connection lists, once connected. */
  readonly tools: number;
}

export const oauthStatusOperation = defineOperation({
  name: 'mcp.oauth-status',
  summary: 'Whether an OAuth connection is pending or made, and how many tools it lists',
  tag: 'mcp',
  input: BINDING,
  errors: ['agent_not_found', 'tool_provider_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}/mcp/{provider}/oauth' },
  cli: {
    notOnCli: '`mesh mcp oauth` waits on it after starting the authorization',
  },
  async run(mesh, input): Promise<OAuthStatusAnswer> {
    const { oauthStatus } = await import('./connections.ts');
    return oauthStatus(mesh, await agentNamed(mesh, input.agent), input.provider);
  },
});

export const disconnectOperation = defineOperation({
  name: 'mcp.disconnect',
  summary: 'Disconnect: remove the binding and retire its credential',
  tag: 'mcp',
  input: BINDING,
  errors: ['agent_not_found', 'tool_provider_not_found'],
  http: { method: 'DELETE', path: '/api/agents/{agent}/mcp/{provider}' },
  cli: {
    command: ['mcp', 'disconnect'],
    print: (out: { agent: string; provider: string; disconnected: boolean }) => [
      out.disconnected
        ? `Disconnected ${out.agent} from ${out.provider}.`
        : `${out.agent} was not connected to ${out.provider}.`,
    ],
  },
  async run(mesh, input): Promise<{ agent: string; provider: string; disconnected: boolean }> {
    const { disconnectAgent } = await import('./connections.ts');
    const agent = await agentNamed(mesh, input.agent);
    const disconnected = await disconnectAgent(mesh, agent, input.provider);
    return { agent: agent.name, provider: input.provider, disconnected };
  },
});

export const mcpConnectionOperations = [
  listConnectionsOperation,
  connectOperation,
  startOAuthOperation,
  oauthStatusOperation,
  disconnectOperation,
] as const;
