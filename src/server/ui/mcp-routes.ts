import { connectionViews } from '../../app/mcp/catalog.ts';
import {
  checkCatalogOperation,
  reviewCatalogOperation,
  setRemoteToolOperation,
  setScopesOperation,
} from '../../app/mcp/catalog-operations.ts';
import {
  connectOperation,
  disconnectOperation,
  startOAuthOperation,
} from '../../app/mcp/connection-operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import { requireAgent } from '../../app/agents/agents.ts';
import { listToolProviders } from '../../app/mcp/provider-reads.ts';
import { isMeshError } from '../../tool/errors.ts';
import { mcpPage, oauthContinuePage } from './mcp-pages.ts';
import {
  agentPath,
  audiencesChosen,
  field,
  param,
  post,
  type FormRoute,
  type UiCall,
  type UiRoute,
} from './ui-route.ts';

const mcpBack = (call: UiCall) => agentPath(param(call, 'agent'), 'mcp');

/** Starting an OAuth connection: a page with the authorization link, not a redirect. */
const oauthRoute: FormRoute = {
  // A page with a link, not a redirect: the pages' policy lets forms post only to this server.
  method: 'POST',
  path: '/agents/{agent}/mcp/oauth',
  operation: startOAuthOperation.name,
  async handle(call) {
    const { mesh, session, form } = call;
    const provider = field(form, 'provider');
    try {
      const agent = await requireAgent(mesh, param(call, 'agent'));
      const started = await invokeOperation(
        mesh,
        startOAuthOperation,
        { agent: agent.name, provider, origin: session.origin },
        session,
      );
      return {
        page: oauthContinuePage(session, agent, provider, new URL(started.authorization_url)),
      };
    } catch (error) {
      if (
        !isMeshError(error) ||
        error.code === 'database_error' ||
        error.code === 'agent_not_found'
      )
        throw error;
      return { redirect: mcpBack(call), flash: { kind: 'error', text: error.message } };
    }
  },
};

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
  post(
    '/agents/{agent}/mcp/connect',
    mcpBack,
    connectOperation,
    (call) => ({
      agent: param(call, 'agent'),
      provider: field(call.form, 'provider'),
      value: field(call.form, 'token'),
    }),
    ({ check }, call) => ({
      text: `Connected to ${field(call.form, 'provider')}: ${check.added.length} tools on ${check.pages} page(s)${check.stoppedBecause ? `; stopped: ${check.stoppedBecause}` : ''}.`,
    }),
  ),
  oauthRoute,
  post(
    '/agents/{agent}/mcp/{provider}/check',
    mcpBack,
    checkCatalogOperation,
    (call) => ({ agent: param(call, 'agent'), provider: param(call, 'provider') }),
    (check, call) => ({
      text: `Checked ${param(call, 'provider')}: ${check.added.length} new, ${check.changed.length} changed, ${check.removed.length} removed.`,
    }),
  ),
  post(
    '/agents/{agent}/mcp/{provider}/review',
    mcpBack,
    reviewCatalogOperation,
    (call) => ({ agent: param(call, 'agent'), provider: param(call, 'provider') }),
    (_, call) => ({ text: `Marked the ${param(call, 'provider')} catalog as reviewed.` }),
  ),
  post(
    '/agents/{agent}/mcp/{provider}/tools/{tool}',
    mcpBack,
    setRemoteToolOperation,
    ({ params, form }) => ({
      agent: params['agent'] ?? '',
      provider: params['provider'] ?? '',
      tool: params['tool'] ?? '',
      // One form per switch: excluding, or the legacy query mark.
      ...(form.has('excluded')
        ? { excluded: field(form, 'excluded') === 'true' }
        : { legacy_query: field(form, 'legacy_query') === 'true' }),
    }),
    (_, { params, form }) => {
      const name = `${params['provider'] ?? ''}__${params['tool'] ?? ''}`;
      if (form.has('excluded'))
        return {
          text: `${name} is ${field(form, 'excluded') === 'true' ? 'excluded' : 'included'}.`,
        };
      return {
        text:
          field(form, 'legacy_query') === 'true'
            ? `${name} keeps query semantics while its definition is unchanged.`
            : `${name} has effect semantics.`,
      };
    },
  ),
  post(
    '/agents/{agent}/mcp/{provider}/scopes',
    mcpBack,
    setScopesOperation,
    (call) => ({
      agent: param(call, 'agent'),
      provider: param(call, 'provider'),
      audiences: audiencesChosen(call.form),
    }),
    (_, call) => ({ text: `Saved the scopes of ${param(call, 'provider')}.` }),
  ),
  post(
    '/agents/{agent}/mcp/{provider}/disconnect',
    mcpBack,
    disconnectOperation,
    (call) => ({ agent: param(call, 'agent'), provider: param(call, 'provider') }),
    (_, call) => ({ text: `Disconnected from ${param(call, 'provider')}.` }),
  ),
];
