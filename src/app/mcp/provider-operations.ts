import { NO_INPUT } from '../operations/fields.ts';
import type { ToolProviderRecord } from '../records.ts';
import { defineOperation } from '../operations/operation.ts';
import { MAX_MCP_TIMEOUT_SECONDS } from '../../mcp/records.ts';

/*
 * Remote MCP servers as the operator registers them, as operations of the catalog: adding one,
 * listing them, setting a server's request timeout and removing one. A server is named by its slug,
 * which namespaces its tools (`<slug>__<tool>`).
 */

/** A registered server as the API answers it. */
export interface ToolProviderAnswer {
  readonly id: string;
  readonly slug: string;
  readonly url: string;
  readonly allow_loopback_http: boolean;
  readonly timeout_seconds: number;
  readonly created_at: string;
}

export const PROVIDER_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'the remote server, by slug',
} as const;

const TIMEOUT_FIELD = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_MCP_TIMEOUT_SECONDS,
  description: `how long one request to it (connect, list, call) may take, in seconds (1-${MAX_MCP_TIMEOUT_SECONDS}, default 60)`,
} as const;

/** The answer for a provider record (imported by `run`, so help never loads the store). */
async function answer(record: Promise<ToolProviderRecord>): Promise<ToolProviderAnswer> {
  const p = await record;
  return {
    id: p.id,
    slug: p.slug,
    url: p.url,
    allow_loopback_http: p.allowLoopbackHttp,
    timeout_seconds: p.requestTimeoutMs / 1000,
    created_at: new Date(p.createdAt).toISOString(),
  };
}

const providers = () => import('./providers.ts');

export const addMcpProviderOperation = defineOperation({
  name: 'mcp.add',
  summary:
    'Register a remote MCP server (Streamable HTTP): https, or http to loopback with allow_loopback_http (development)',
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['slug', 'url'],
    properties: {
      slug: {
        type: 'string',
        pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$',
        maxLength: 32,
        description: 'the name its tools are namespaced by (lowercase words joined by _)',
      },
      url: { type: 'string', minLength: 1, maxLength: 2000, description: "the server's URL" },
      allow_loopback_http: {
        type: 'boolean',
        description: 'allows plain http to this machine (development)',
      },
      timeout_seconds: TIMEOUT_FIELD,
    },
  },
  errors: ['invalid_tool_provider', 'tool_provider_exists'],
  http: { method: 'POST', path: '/api/mcp/providers', status: 201 },
  cli: {
    command: ['mcp', 'add'],
    positionals: ['slug', 'url'],
    switches: ['allow_loopback_http'],
    flags: { timeout_seconds: 'timeout' },
    print: (p: ToolProviderAnswer) => [
      `Added MCP provider ${p.slug} (${p.url}; requests time out after ${p.timeout_seconds} s).`,
    ],
  },
  async run(mesh, input): Promise<ToolProviderAnswer> {
    const { addToolProvider } = await providers();
    return answer(
      addToolProvider(mesh, {
        slug: input.slug,
        url: input.url,
        allowLoopbackHttp: input.allow_loopback_http === true,
        ...(input.timeout_seconds === undefined ? {} : { timeoutSeconds: input.timeout_seconds }),
      }),
    );
  },
});

export const listMcpProvidersOperation = defineOperation({
  name: 'mcp.list',
  summary: 'Registered remote MCP servers',
  tag: 'mcp',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/mcp/providers' },
  cli: {
    command: ['mcp', 'list'],
    print: (out: { providers: readonly ToolProviderAnswer[] }) =>
      out.providers.length === 0
        ? ['No MCP providers yet: mesh mcp add SLUG URL']
        : out.providers.map((p) => `${p.slug}  ${p.url}  timeout ${p.timeout_seconds} s`),
  },
  async run(mesh): Promise<{ providers: ToolProviderAnswer[] }> {
    const { listToolProviders } = await import('./provider-reads.ts');
    const all = await listToolProviders(mesh);
    return { providers: await Promise.all(all.map((p) => answer(Promise.resolve(p)))) };
  },
});

export const setMcpTimeoutOperation = defineOperation({
  name: 'mcp.timeout',
  summary: 'Set how long one request to the server (connect, list, call) may take, in seconds',
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['provider', 'timeout_seconds'],
    properties: { provider: PROVIDER_FIELD, timeout_seconds: TIMEOUT_FIELD },
  },
  errors: ['tool_provider_not_found'],
  http: { method: 'PUT', path: '/api/mcp/providers/{provider}/timeout' },
  cli: {
    command: ['mcp', 'timeout'],
    positionals: ['provider', 'timeout_seconds'],
    print: (p: ToolProviderAnswer) => [
      `Requests to ${p.slug} now time out after ${p.timeout_seconds} s.`,
    ],
  },
  async run(mesh, input): Promise<ToolProviderAnswer> {
    const { setToolProviderTimeoutSeconds } = await providers();
    return answer(setToolProviderTimeoutSeconds(mesh, input.provider, input.timeout_seconds));
  },
});

export const removeMcpProviderOperation = defineOperation({
  name: 'mcp.remove',
  summary: 'Remove a registered remote MCP server (refused while an agent is connected to it)',
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['provider'],
    properties: { provider: PROVIDER_FIELD },
  },
  errors: ['tool_provider_not_found', 'tool_provider_in_use'],
  http: { method: 'DELETE', path: '/api/mcp/providers/{provider}', status: 204 },
  cli: {
    command: ['mcp', 'remove'],
    positionals: ['provider'],
    print: (_out: undefined, input) => [`Removed ${String(input['provider'])}.`],
  },
  async run(mesh, input): Promise<undefined> {
    const { removeToolProvider } = await providers();
    await removeToolProvider(mesh, input.provider);
    return undefined;
  },
});

export const mcpProviderOperations = [
  addMcpProviderOperation,
  listMcpProvidersOperation,
  setMcpTimeoutOperation,
  removeMcpProviderOperation,
] as const;
