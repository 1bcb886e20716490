import {
  addModelProvider,
  agentPackages,
  captureAgentSecret,
  configValueFromText,
  createAgent,
  describeProviders,
  packageViews,
  requireAgent,
  retireAgentSecret,
  setAgentAudiences,
  setAgentConfig,
  setAgentToolEnabled,
  setProviderKey,
} from '../../app/operator.ts';
import { chat } from '../../app/turns.ts';
import {
  addToolProvider,
  connectAgent,
  connectionViews,
  disconnectAgent,
  excludeTool,
  markLegacyQuery,
  recheckCatalog,
  reviewCatalog,
  setScopes,
  startOAuthConnection,
} from '../../app/mcp.ts';
import { mcpPage, mcpProvidersSection, oauthContinuePage } from './mcp-pages.ts';
import {
  getAgent,
  getConversation,
  listAgents,
  listConversationRuns,
  listConversations,
  listMessages,
  listModelProviders,
  listRuns,
  listToolProviders,
} from '../../app/queries.ts';
import type { Audience } from '../../app/records.ts';
import { isMeshError, MeshError } from '../../tool/errors.ts';
import { isUuid } from '../ids.ts';
import { agentPath, field, post, type UiCall, type UiRoute } from './ui-route.ts';
import {
  agentsPage,
  chatPage,
  packagesPage,
  providersPage,
  runPage,
  runsPage,
  toolsPage,
} from './pages.ts';

const toolsBack = (call: UiCall) => agentPath(call.params['agent'] ?? '', 'tools');
const mcpBack = (call: UiCall) => agentPath(call.params['agent'] ?? '', 'mcp');

/** Every page and form handler of the web UI (login and assets are served before these). */
export const uiRoutes: readonly UiRoute[] = [
  { method: 'GET', path: '/', handle: async () => ({ redirect: '/agents' }) },
  {
    method: 'GET',
    path: '/agents',
    handle: async ({ mesh, session }) => ({
      page: agentsPage(session, await listAgents(mesh), await listModelProviders(mesh)),
    }),
  },
  post(
    '/agents',
    () => '/agents',
    async ({ mesh, form }) => {
      const provider = field(form, 'provider');
      const model = field(form, 'model').trim();
      const persona = field(form, 'persona').trim();
      const agent = await createAgent(mesh, {
        name: field(form, 'name').trim(),
        ...(provider ? { provider } : {}),
        ...(model ? { model } : {}),
        persona: persona === '' ? null : persona,
      });
      return { text: `Created agent ${agent.name}.`, to: agentPath(agent.name, 'tools') };
    },
  ),
  {
    method: 'GET',
    path: '/agents/{agent}',
    handle: async ({ params }) => ({ redirect: agentPath(params['agent'] ?? '', 'tools') }),
  },
  {
    method: 'GET',
    path: '/agents/{agent}/tools',
    handle: async ({ mesh, session, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      return { page: toolsPage(session, agent, await agentPackages(mesh, agent)) };
    },
  },
  post('/agents/{agent}/tools/{tool}', toolsBack, async ({ mesh, params, form }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const enabled = field(form, 'enabled') === 'true';
    await setAgentToolEnabled(mesh, agent, params['tool'] ?? '', enabled);
    return { text: `${params['tool']} is ${enabled ? 'enabled' : 'disabled'} for ${agent.name}.` };
  }),
  post('/agents/{agent}/packages/{package}/config/{key}', toolsBack, async (call) => {
    const { mesh, params, form } = call;
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const pkg = params['package'] ?? '';
    const key = params['key'] ?? '';
    await setAgentConfig(
      mesh,
      agent,
      pkg,
      key,
      configValueFromText(mesh, pkg, key, field(form, 'value')),
    );
    return { text: `Saved ${key}.` };
  }),
  post(
    '/agents/{agent}/packages/{package}/secrets/{key}',
    toolsBack,
    async ({ mesh, params, form }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const meta = await captureAgentSecret(
        mesh,
        agent,
        params['package'] ?? '',
        params['key'] ?? '',
        field(form, 'value'),
      );
      return { text: `Captured ${params['key']} (version ${meta.version}).` };
    },
  ),
  post(
    '/agents/{agent}/packages/{package}/secrets/{key}/revoke',
    toolsBack,
    async ({ mesh, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      await retireAgentSecret(mesh, agent, params['package'] ?? '', params['key'] ?? '');
      return { text: `Revoked ${params['key']}.` };
    },
  ),
  post(
    '/agents/{agent}/packages/{package}/audiences',
    toolsBack,
    async ({ mesh, params, form }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const chosen = form.getAll('audience');
      // Both boxes ticked is no limit at all; the stored form of "everywhere" is no row.
      const all = chosen.includes('direct') && chosen.includes('shared');
      await setAgentAudiences(mesh, agent, params['package'] ?? '', all ? undefined : chosen);
      return { text: `Saved audiences for ${params['package']}.` };
    },
  ),
  {
    method: 'GET',
    path: '/agents/{agent}/chat',
    handle: async ({ mesh, session, params, query }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const id = query.get('conversation');
      let current;
      if (id !== null) {
        const conversation = isUuid(id) ? await getConversation(mesh, id) : undefined;
        if (!conversation || conversation.agentId !== agent.id)
          throw new MeshError(
            'conversation_not_found',
            'no conversation with that id for this agent',
          );
        const [messages, runs] = await Promise.all([
          listMessages(mesh, conversation.id),
          listConversationRuns(mesh, conversation.id),
        ]);
        current = { conversation, messages, runs };
      }
      return {
        page: chatPage(session, agent, await listConversations(mesh, agent.id), current),
      };
    },
  },
  post(
    '/agents/{agent}/chat',
    (call) => {
      const conversation = field(call.form, 'conversation');
      return `${agentPath(call.params['agent'] ?? '', 'chat')}${conversation ? `?conversation=${encodeURIComponent(conversation)}` : ''}`;
    },
    async ({ mesh, params, form, session }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const conversation = field(form, 'conversation');
      const audience = field(form, 'audience');
      if (conversation && !isUuid(conversation))
        throw new MeshError('conversation_not_found', 'no conversation with that id');
      const result = await chat(mesh, {
        agentId: agent.id,
        ...(conversation ? { conversationId: conversation } : {}),
        ...(audience === 'shared' || audience === 'direct'
          ? { audience: audience satisfies Audience }
          : {}),
        actor: session.actor,
        body: field(form, 'body'),
      });
      return {
        text:
          result.status === 'succeeded'
            ? 'Sent.'
            : `The turn ended ${result.status}: ${result.reason ?? ''}`,
        to: `${agentPath(agent.name, 'chat')}?conversation=${result.conversationId}`,
      };
    },
  ),
  {
    method: 'GET',
    path: '/agents/{agent}/runs',
    handle: async ({ mesh, session, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      return {
        page: runsPage(session, agent, await listRuns(mesh, { agentId: agent.id, limit: 100 })),
      };
    },
  },
  {
    method: 'GET',
    path: '/runs/{run}',
    handle: async ({ mesh, session, params }) => {
      const id = params['run'] ?? '';
      const run = isUuid(id) ? await mesh.ledger.run(id) : undefined;
      if (!run) throw new MeshError('run_not_found', 'no run with that id');
      const [agent, steps] = await Promise.all([
        getAgent(mesh, run.agentId),
        mesh.ledger.steps(run.id),
      ]);
      return { page: runPage(session, agent, run, steps) };
    },
  },
  {
    method: 'GET',
    path: '/providers',
    handle: async ({ mesh, session }) => ({
      page: providersPage(
        session,
        await describeProviders(mesh),
        mcpProvidersSection(session, await listToolProviders(mesh)),
      ),
    }),
  },
  post(
    '/mcp/providers',
    () => '/providers',
    async ({ mesh, form }) => {
      const provider = await addToolProvider(mesh, {
        slug: field(form, 'slug').trim(),
        url: field(form, 'url').trim(),
        allowLoopbackHttp: field(form, 'allow_loopback_http') === 'true',
      });
      return { text: `Registered ${provider.slug}.` };
    },
  ),
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
  post(
    '/providers',
    () => '/providers',
    async ({ mesh, form }) => {
      const name = field(form, 'name').trim();
      const contextText = field(form, 'context_tokens').trim();
      const contextTokens = contextText === '' ? undefined : Number(contextText);
      if (field(form, 'kind') === 'scripted') {
        let script: unknown;
        try {
          script = JSON.parse(field(form, 'script'));
        } catch {
          throw new MeshError('invalid_script', 'the script is not valid JSON');
        }
        await addModelProvider(mesh, { name, kind: 'scripted', script });
      } else {
        await addModelProvider(mesh, {
          name,
          kind: 'openai_compatible',
          baseUrl: field(form, 'base_url').trim(),
          apiKey: field(form, 'api_key'),
          ...(contextTokens === undefined ? {} : { contextTokens }),
        });
      }
      return { text: `Added provider ${name}.` };
    },
  ),
  post(
    '/providers/{provider}/api-key',
    () => '/providers',
    async ({ mesh, params, form }) => {
      const meta = await setProviderKey(mesh, params['provider'] ?? '', field(form, 'value'));
      return { text: `Replaced the API key of ${params['provider']} (version ${meta.version}).` };
    },
  ),
  {
    method: 'GET',
    path: '/packages',
    handle: async ({ mesh, session }) => ({ page: packagesPage(session, packageViews(mesh)) }),
  },
];
