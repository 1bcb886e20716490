import {
  catalogView,
  withheldTools,
  excludeTool,
  markLegacyQuery,
  recheckCatalog,
  reviewCatalog,
  setScopes,
} from '../../app/mcp-catalog.ts';
import { bindingJson } from '../../app/mcp-views.ts';
import {
  agentConnections,
  connectAgent,
  disconnectAgent,
  startOAuthConnection,
} from '../../app/mcp-connections.ts';
import {
  addToolProvider,
  MAX_MCP_TIMEOUT_SECONDS,
  removeToolProvider,
  setToolProviderTimeoutSeconds,
} from '../../app/mcp-providers.ts';
import type { Mesh } from '../../app/mesh.ts';
import { requireAgent } from '../../app/agents.ts';
import { listToolProviders } from '../../app/queries.ts';
import type { ToolProviderRecord } from '../../app/records.ts';
import { UUID_SOURCE } from '../ids.ts';
import { closedObject } from '../router.ts';
import { route, type Route } from './context.ts';

const TIMEOUT_SECONDS = {
  type: 'integer',
  minimum: 1,
  maximum: MAX_MCP_TIMEOUT_SECONDS,
} as const;

export function toolProviderJson(p: ToolProviderRecord): Record<string, unknown> {
  return {
    id: p.id,
    slug: p.slug,
    url: p.url,
    allow_loopback_http: p.allowLoopbackHttp,
    timeout_seconds: p.requestTimeoutMs / 1000,
    created_at: p.createdAt,
  };
}

async function agentAndSlug(mesh: Mesh, params: Readonly<Record<string, string>>) {
  return {
    agent: await requireAgent(mesh, params['agent'] ?? ''),
    slug: params['provider'] ?? '',
  };
}

/** The remote-MCP routes of the operator API: servers, connections, catalogs, scopes. */
export const mcpRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/mcp/providers',
    operationId: 'listToolProviders',
    summary: 'Registered remote MCP servers',
    tag: 'mcp',
    handle: async ({ context }) => ({
      providers: (await listToolProviders(context.mesh)).map(toolProviderJson),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/mcp/providers',
    operationId: 'addToolProvider',
    summary:
      'Register a remote MCP server (Streamable HTTP): https, or http to loopback with allow_loopback_http (development)',
    tag: 'mcp',
    status: 201,
    body: closedObject(
      {
        slug: { type: 'string', pattern: '^[a-z][a-z0-9]*(_[a-z0-9]+)*$', maxLength: 32 },
        url: { type: 'string', minLength: 1, maxLength: 2000 },
        allow_loopback_http: { type: 'boolean' },
        timeout_seconds: TIMEOUT_SECONDS,
      },
      ['slug', 'url'],
    ),
    handle: async ({ context, body }) => {
      return toolProviderJson(
        await addToolProvider(context.mesh, {
          slug: body.slug,
          url: body.url,
          allowLoopbackHttp: body.allow_loopback_http === true,
          ...(body.timeout_seconds === undefined ? {} : { timeoutSeconds: body.timeout_seconds }),
        }),
      );
    },
  }),
  route({
    method: 'PUT',
    path: '/api/mcp/providers/{provider}/timeout',
    operationId: 'setToolProviderTimeout',
    summary: 'Set how long one request to the server (connect, list, call) may take, in seconds',
    tag: 'mcp',
    body: closedObject({ timeout_seconds: TIMEOUT_SECONDS }, ['timeout_seconds']),
    handle: async ({ context, params, body }) =>
      toolProviderJson(
        await setToolProviderTimeoutSeconds(
          context.mesh,
          params['provider'] ?? '',
          body.timeout_seconds,
        ),
      ),
  }),
  route({
    method: 'DELETE',
    path: '/api/mcp/providers/{provider}',
    operationId: 'removeToolProvider',
    summary: 'Remove a registered remote MCP server (refused while an agent is connected to it)',
    tag: 'mcp',
    status: 204,
    handle: async ({ context, params }) => {
      await removeToolProvider(context.mesh, params['provider'] ?? '');
    },
  }),
  route({
    method: 'GET',
    path: '/api/agents/{agent}/mcp',
    operationId: 'listAgentConnections',
    summary: "An agent's connections to remote MCP servers",
    tag: 'mcp',
    handle: async ({ context, params }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      return { connections: (await agentConnections(context.mesh, agent)).map(bindingJson) };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/mcp/{provider}/token',
    operationId: 'connectAgentWithToken',
    summary:
      "Connect an agent with its own account's bearer token (write-only; stored on the binding) and read the catalog",
    tag: 'mcp',
    body: closedObject({ value: { type: 'string', minLength: 1, maxLength: 65536 } }, ['value']),
    handle: async ({ context, params, body }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      const { binding, check } = await connectAgent(context.mesh, agent, slug, body.value);
      const withheld = withheldTools((await catalogView(context.mesh, agent, slug)).tools);
      return { connection: bindingJson(binding), check, withheld };
    },
  }),
  route({
    method: 'POST',
    path: '/api/agents/{agent}/mcp/{provider}/oauth',
    operationId: 'startOAuthConnection',
    summary:
      'Start connecting an agent with OAuth (authorization code, PKCE S256, resource indicator): answers the URL to send the operator’s browser to; the server redirects back to this Mesh to finish',
    tag: 'mcp',
    handle: async ({ context, params }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      const { authorizationUrl } = await startOAuthConnection(
        context.mesh,
        agent,
        slug,
        context.origin,
      );
      return { authorization_url: authorizationUrl.toString() };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/agents/{agent}/mcp/{provider}',
    operationId: 'disconnectAgent',
    summary: 'Disconnect: remove the binding and retire its credential',
    tag: 'mcp',
    status: 204,
    handle: async ({ context, params }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      await disconnectAgent(context.mesh, agent, slug);
    },
  }),
  route({
    method: 'POST',
    path: '/api/agents/{agent}/mcp/{provider}/catalog/check',
    operationId: 'checkCatalog',
    summary: 'Re-read the catalog now',
    tag: 'mcp',
    handle: async ({ context, params }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      return recheckCatalog(context.mesh, agent, slug);
    },
  }),
  route({
    method: 'POST',
    path: '/api/agents/{agent}/mcp/{provider}/catalog/review',
    operationId: 'reviewCatalog',
    summary: 'Mark the catalog as reviewed as it is now',
    tag: 'mcp',
    status: 204,
    handle: async ({ context, params }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      await reviewCatalog(context.mesh, agent, slug);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/mcp/{provider}/tools/{tool}',
    operationId: 'setRemoteTool',
    summary:
      'Exclude or include a remote tool, or mark its current definition as a legacy query (lost when it changes)',
    tag: 'mcp',
    status: 204,
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { excluded: { type: 'boolean' }, legacy_query: { type: 'boolean' } },
    },
    handle: async ({ context, params, body }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      const tool = params['tool'] ?? '';
      if (body.excluded !== undefined)
        await excludeTool(context.mesh, agent, slug, tool, body.excluded);
      if (body.legacy_query !== undefined)
        await markLegacyQuery(context.mesh, agent, slug, tool, body.legacy_query);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/mcp/{provider}/scopes',
    operationId: 'setConnectionScopes',
    summary: 'Limit a connection to conversation audiences and/or conversations (null: no limit)',
    tag: 'mcp',
    status: 204,
    body: closedObject(
      {
        audiences: {
          anyOf: [
            { type: 'array', items: { enum: ['direct', 'shared'] }, uniqueItems: true },
            { type: 'null' },
          ],
        },
        conversation_ids: {
          anyOf: [
            {
              type: 'array',
              items: { type: 'string', pattern: `^${UUID_SOURCE}$` },
              maxItems: 1000,
            },
            { type: 'null' },
          ],
        },
      },
      ['audiences', 'conversation_ids'],
    ),
    handle: async ({ context, params, body }) => {
      const { agent, slug } = await agentAndSlug(context.mesh, params);
      await setScopes(context.mesh, agent, slug, {
        audiences: body.audiences,
        conversationIds: body.conversation_ids,
      });
    },
  }),
];
