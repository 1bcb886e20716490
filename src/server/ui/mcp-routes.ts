import {
  connectionViews,
  excludeTool,
  markLegacyQuery,
  recheckCatalog,
  reviewCatalog,
  setScopes,
} from '../../app/mcp/catalog.ts';
import { connectAgent, disconnectAgent, startOAuthConnection } from '../../app/mcp/connections.ts';
import { requireAgent } from '../../app/agents/agents.ts';
import { listToolProviders } from '../../app/mcp/provider-reads.ts';
import type { Audience } from '../../app/records.ts';
import { isMeshError } from '../../tool/errors.ts';
import { mcpPage, oauthContinuePage } from './mcp-pages.ts';
import { agentPath, field, post, type UiCall, type UiRoute } from './ui-route.ts';

const mcpBack = (call: UiCall) => agentPath(call.params['agent'] ?? '', 'mcp');

/** An agent's MCP tab: connect, check, review, exclude, scope, disconnect. */
export const mcpRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/agents/{agent}/mcp',
    handle: async ({ mesh, session, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      return {
        page: mcpPage(
          session,
          agent,
          await listToolProviders(mesh),
          await connectionViews(mesh, agent),
        ),
      };
    },
  },
  post('/agents/{agent}/mcp/connect', mcpBack, async ({ mesh, params, form }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const { check } = await connectAgent(
      mesh,
      agent,
      field(form, 'provider'),
      field(form, 'token'),
    );
    return {
      text: `Connected to ${field(form, 'provider')}: ${check.added.length} tools on ${check.pages} page(s)${check.stoppedBecause ? `; stopped: ${check.stoppedBecause}` : ''}.`,
    };
  }),
  {
    // A page with a link, not a redirect: the pages' policy lets forms post only to this server.
    method: 'POST',
    path: '/agents/{agent}/mcp/oauth',
    async handle({ mesh, session, params, form }) {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      try {
        const { authorizationUrl } = await startOAuthConnection(
          mesh,
          agent,
          field(form, 'provider'),
          session.origin,
        );
        return {
          page: oauthContinuePage(session, agent, field(form, 'provider'), authorizationUrl),
        };
      } catch (error) {
        if (!isMeshError(error) || error.code === 'database_error') throw error;
        return {
          redirect: agentPath(params['agent'] ?? '', 'mcp'),
          flash: { kind: 'error', text: error.message },
        };
      }
    },
  },
  post('/agents/{agent}/mcp/{provider}/check', mcpBack, async ({ mesh, params }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const check = await recheckCatalog(mesh, agent, params['provider'] ?? '');
    return {
      text: `Checked ${params['provider']}: ${check.added.length} new, ${check.changed.length} changed, ${check.removed.length} removed.`,
    };
  }),
  post('/agents/{agent}/mcp/{provider}/review', mcpBack, async ({ mesh, params }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    await reviewCatalog(mesh, agent, params['provider'] ?? '');
    return { text: `Marked the ${params['provider']} catalog as reviewed.` };
  }),
  post('/agents/{agent}/mcp/{provider}/tools/{tool}', mcpBack, async ({ mesh, params, form }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const slug = params['provider'] ?? '';
    const tool = params['tool'] ?? '';
    if (form.has('excluded')) {
      const excluded = field(form, 'excluded') === 'true';
      await excludeTool(mesh, agent, slug, tool, excluded);
      return { text: `${slug}__${tool} is ${excluded ? 'excluded' : 'included'}.` };
    }
    const legacy = field(form, 'legacy_query') === 'true';
    await markLegacyQuery(mesh, agent, slug, tool, legacy);
    return {
      text: legacy
        ? `${slug}__${tool} keeps query semantics while its definition is unchanged.`
        : `${slug}__${tool} has effect semantics.`,
    };
  }),
  post('/agents/{agent}/mcp/{provider}/scopes', mcpBack, async ({ mesh, params, form }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const chosen = form
      .getAll('audience')
      .filter((a): a is Audience => a === 'direct' || a === 'shared');
    const all = chosen.includes('direct') && chosen.includes('shared');
    await setScopes(mesh, agent, params['provider'] ?? '', { audiences: all ? null : chosen });
    return { text: `Saved the scopes of ${params['provider']}.` };
  }),
  post('/agents/{agent}/mcp/{provider}/disconnect', mcpBack, async ({ mesh, params }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    await disconnectAgent(mesh, agent, params['provider'] ?? '');
    return { text: `Disconnected from ${params['provider']}.` };
  }),
];
