import { captureAgentSecret, retireAgentSecret } from '../../app/agents/secrets.ts';
import { agentCommitments } from '../../app/agents/commitments.ts';
import { createAgent, deleteAgent, requireAgent } from '../../app/agents/agents.ts';
import {
  configValueFromText,
  agentPackages,
  setAgentAudiences,
  setAgentConfig,
  setAgentToolEnabled,
} from '../../app/packages/packages.ts';
import { listAgents } from '../../app/agents/reads.ts';
import { listModelProviders } from '../../app/backends/provider-reads.ts';
import { agentBudgetOperation } from '../../app/agents/budget-operation.ts';
import { METERS } from '../../app/agents/budget-meters.ts';
import { updateAgentOperation } from '../../app/agents/operations.ts';
import { agentToolsOperation, callToolOperation } from '../../app/packages/tool-operations.ts';
import {
  checkPackageOperation,
  compensateOperation,
  disablePackageOperation,
  enablePackageOperation,
  upgradePackageOperation,
} from '../../app/packages/install-operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import { MeshError } from '../../tool/errors.ts';
import { agentsPage, settingsPage, toolsPage } from './agent-pages.ts';
import { callPage } from './call-page.ts';
import { agentPath, field, post, type UiCall, type UiRoute } from './ui-route.ts';

const toolsBack = (call: UiCall) => agentPath(call.params['agent'] ?? '', 'tools');

/** A Tools tab form that moves a package's install through one operation. */
const installRoute = (
  verb: string,
  // The action operations share one type (enable, disable, check): an install in, one out.
  operation: typeof enablePackageOperation,
) =>
  post(
    `/agents/{agent}/packages/{package}/${verb}`,
    toolsBack,
    async ({ mesh, params, session }) => {
      const out = await invokeOperation(
        mesh,
        operation,
        { agent: params['agent'] ?? '', package: params['package'] ?? '' },
        session,
      );
      const last = out.transitions.at(-1);
      return {
        text: `${out.package} is ${out.state === 'error' ? 'in error' : out.state}${last?.error ? `: ${last.error}` : ''}.`,
      };
    },
  );

/** The agents page and each agent's Tools tab with its forms. */
export const agentRoutes: readonly UiRoute[] = [
  installRoute('enable', enablePackageOperation),
  installRoute('disable', disablePackageOperation),
  installRoute('check', checkPackageOperation),
  installRoute('upgrade', upgradePackageOperation),
  post(
    '/agents/{agent}/packages/{package}/compensate',
    toolsBack,
    async ({ mesh, params, form, session }) => {
      const how = field(form, 'how');
      const out = await invokeOperation(
        mesh,
        compensateOperation,
        {
          agent: params['agent'] ?? '',
          package: params['package'] ?? '',
          how: how as 'retry' | 'abandon',
        },
        session,
      );
      return { text: `${out.package} is ${out.state}.` };
    },
  ),
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
  post(
    '/agents/{agent}/delete',
    () => '/agents',
    async ({ mesh, params, form }) => {
      const name = params['agent'] ?? '';
      // Deleting drops the agent's history: the operator types its name, as on the CLI.
      if (field(form, 'confirm').trim() !== name)
        throw new MeshError('invalid_agent', `type the agent's name to confirm deleting it`);
      await deleteAgent(mesh, name);
      return { text: `Deleted agent ${name}.` };
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
      const [packages, commitments] = await Promise.all([
        agentPackages(mesh, agent),
        agentCommitments(mesh, agent.id),
      ]);
      return { page: toolsPage(session, agent, packages, commitments) };
    },
  },
  {
    method: 'GET',
    path: '/agents/{agent}/call',
    handle: async ({ mesh, session, params, query }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const tools = await invokeOperation(
        mesh,
        agentToolsOperation,
        { agent: agent.name },
        session,
      );
      return { page: callPage(session, agent, tools, query.get('tool') ?? '') };
    },
  },
  post(
    '/agents/{agent}/call',
    (call) => agentPath(call.params['agent'] ?? '', 'call'),
    async ({ mesh, params, form, session }) => {
      const answer = await invokeOperation(
        mesh,
        callToolOperation,
        {
          agent: params['agent'] ?? '',
          tool: field(form, 'tool'),
          arguments: field(form, 'arguments') || '{}',
        },
        session,
      );
      const o = answer.observation;
      return {
        text: `${field(form, 'tool')}: ${answer.status}${o ? ` — ${o.kind}` : ''}`,
        to: `/runs/${answer.run_id}`,
      };
    },
  ),
  {
    method: 'GET',
    path: '/agents/{agent}/settings',
    handle: async ({ mesh, session, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const budget = await invokeOperation(
        mesh,
        agentBudgetOperation,
        { agent: agent.name },
        session,
      );
      return { page: settingsPage(session, agent, await listModelProviders(mesh), budget) };
    },
  },
  post(
    '/agents/{agent}/settings',
    (call) => agentPath(call.params['agent'] ?? '', 'settings'),
    async ({ mesh, params, form, session }) => {
      const provider = field(form, 'provider');
      const model = field(form, 'model').trim();
      const updated = await invokeOperation(
        mesh,
        updateAgentOperation,
        {
          agent: params['agent'] ?? '',
          ...(provider ? { provider } : {}),
          ...(model ? { model } : {}),
          persona: field(form, 'persona').trim(),
          image_input: field(form, 'image_input') === 'on',
        },
        session,
      );
      return { text: `Saved ${updated.name}'s settings.` };
    },
  ),
  post(
    '/agents/{agent}/budget',
    (call) => agentPath(call.params['agent'] ?? '', 'settings'),
    async ({ mesh, params, form, session }) => {
      // Each meter as typed; what does not read as a whole number is refused by the operation,
      // naming the field.
      const meters: Record<string, unknown> = {};
      for (const name of Object.keys(METERS)) {
        const text = field(form, name).trim();
        if (text !== '') meters[name] = /^\d{1,9}$/.test(text) ? Number(text) : text;
      }
      const saved = await invokeOperation(
        mesh,
        agentBudgetOperation,
        { agent: params['agent'] ?? '', ...meters },
        session,
      );
      return { text: `Saved ${saved.agent}'s budget: ${saved.budget.rounds} rounds per run.` };
    },
  ),
  post('/agents/{agent}/tools/{tool}', toolsBack, async ({ mesh, params, form }) => {
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const enabled = field(form, 'enabled') === 'true';
    await setAgentToolEnabled(mesh, agent, params['tool'] ?? '', enabled);
    return { text: `${params['tool']} is ${enabled ? 'enabled' : 'disabled'} for ${agent.name}.` };
  }),
  post('/agents/{agent}/packages/{package}/config/{key}', toolsBack, async (call) => {
    const { mesh, params, form, session } = call;
    const agent = await requireAgent(mesh, params['agent'] ?? '');
    const pkg = params['package'] ?? '';
    const key = params['key'] ?? '';
    await setAgentConfig(
      mesh,
      agent,
      pkg,
      key,
      configValueFromText(mesh, pkg, key, field(form, 'value')),
      session.actor,
    );
    return { text: `Saved ${key}.` };
  }),
  post(
    '/agents/{agent}/packages/{package}/secrets/{key}',
    toolsBack,
    async ({ mesh, params, form, session }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const meta = await captureAgentSecret(
        mesh,
        agent,
        params['package'] ?? '',
        params['key'] ?? '',
        field(form, 'value'),
        session.actor,
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
];
