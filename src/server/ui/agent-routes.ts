import { removeSecretOperation, setSecretOperation } from '../../app/packages/secret-operations.ts';
import { setConfigOperation } from '../../app/packages/config-operations.ts';
import {
  setAudiencesOperation,
  setToolEnabledOperation,
} from '../../app/packages/package-operations.ts';
import { agentCommitments } from '../../app/agents/commitments.ts';
import { requireAgent } from '../../app/agents/agents.ts';
import { agentPackages } from '../../app/packages/packages.ts';
import { listAgents } from '../../app/agents/reads.ts';
import { listModelProviders } from '../../app/backends/provider-reads.ts';
import { agentBudgetOperation } from '../../app/agents/budget-operation.ts';
import { METERS } from '../../app/agents/budget-meters.ts';
import {
  createAgentOperation,
  deleteAgentOperation,
  updateAgentOperation,
} from '../../app/agents/operations.ts';
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
import {
  agentPath,
  audiencesChosen,
  field,
  optional,
  param,
  post,
  wholeNumber,
  type UiCall,
  type UiRoute,
} from './ui-route.ts';

const toolsBack = (call: UiCall) => agentPath(param(call, 'agent'), 'tools');

/** A Tools tab form that moves a package's install through one operation. */
const installRoute = (
  verb: string,
  // The action operations share one type (enable, disable, check): an install in, one out.
  operation: typeof enablePackageOperation,
) =>
  post(
    `/agents/{agent}/packages/{package}/${verb}`,
    toolsBack,
    operation,
    (call) => ({ agent: param(call, 'agent'), package: param(call, 'package') }),
    (out) => {
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
    compensateOperation,
    (call) => ({
      agent: param(call, 'agent'),
      package: param(call, 'package'),
      how: field(call.form, 'how'),
    }),
    (out) => ({ text: `${out.package} is ${out.state}.` }),
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
    createAgentOperation,
    ({ form }) => ({
      name: field(form, 'name').trim(),
      ...optional(form, 'provider'),
      ...optional(form, 'model'),
      ...optional(form, 'persona'),
    }),
    (agent) => ({ text: `Created agent ${agent.name}.`, to: agentPath(agent.name, 'tools') }),
  ),
  post(
    '/agents/{agent}/delete',
    () => '/agents',
    deleteAgentOperation,
    (call) => {
      const name = param(call, 'agent');
      // Deleting drops the agent's history: the operator types its name, as the CLI asks --yes.
      if (field(call.form, 'confirm').trim() !== name)
        throw new MeshError('invalid_agent', `type the agent's name to confirm deleting it`, {
          field: 'confirm',
        });
      return { agent: name };
    },
    (_, call) => ({ text: `Deleted agent ${param(call, 'agent')}.` }),
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
    (call) => agentPath(param(call, 'agent'), 'call'),
    callToolOperation,
    (call) => ({
      agent: param(call, 'agent'),
      tool: field(call.form, 'tool'),
      arguments: field(call.form, 'arguments') || '{}',
    }),
    (answer, { form }) => {
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
    (call) => agentPath(param(call, 'agent'), 'settings'),
    updateAgentOperation,
    (call) => ({
      agent: param(call, 'agent'),
      ...optional(call.form, 'provider'),
      ...optional(call.form, 'model'),
      persona: field(call.form, 'persona').trim(),
      image_input: field(call.form, 'image_input') === 'on',
    }),
    (updated) => ({ text: `Saved ${updated.name}'s settings.` }),
  ),
  post(
    '/agents/{agent}/budget',
    (call) => agentPath(param(call, 'agent'), 'settings'),
    agentBudgetOperation,
    (call) => {
      // Each meter as typed; what does not read as a whole number is refused by the operation,
      // naming the field.
      const meters = Object.keys(METERS).map((name) => wholeNumber(call.form, name));
      return Object.assign({ agent: param(call, 'agent') }, ...meters) as Record<string, unknown>;
    },
    (saved) => ({ text: `Saved ${saved.agent}'s budget: ${saved.budget.rounds} rounds per run.` }),
  ),
  post(
    '/agents/{agent}/tools/{tool}',
    toolsBack,
    setToolEnabledOperation,
    (call) => ({
      agent: param(call, 'agent'),
      tool: param(call, 'tool'),
      enabled: field(call.form, 'enabled') === 'true',
    }),
    (_, call) => {
      const enabled = field(call.form, 'enabled') === 'true';
      return {
        text: `${param(call, 'tool')} is ${enabled ? 'enabled' : 'disabled'} for ${param(call, 'agent')}.`,
      };
    },
  ),
  post(
    '/agents/{agent}/packages/{package}/config/{key}',
    toolsBack,
    setConfigOperation,
    (call) => ({
      agent: param(call, 'agent'),
      package: param(call, 'package'),
      key: param(call, 'key'),
      // As typed: the operation reads the text as the key's declared type.
      value: field(call.form, 'value'),
    }),
    (_, call) => ({ text: `Saved ${param(call, 'key')}.` }),
  ),
  post(
    '/agents/{agent}/packages/{package}/secrets/{key}',
    toolsBack,
    setSecretOperation,
    (call) => ({
      agent: param(call, 'agent'),
      package: param(call, 'package'),
      key: param(call, 'key'),
      value: field(call.form, 'value'),
    }),
    (meta, call) => ({ text: `Captured ${param(call, 'key')} (version ${meta.version}).` }),
  ),
  post(
    '/agents/{agent}/packages/{package}/secrets/{key}/revoke',
    toolsBack,
    removeSecretOperation,
    (call) => ({
      agent: param(call, 'agent'),
      package: param(call, 'package'),
      key: param(call, 'key'),
    }),
    (_, call) => ({ text: `Revoked ${param(call, 'key')}.` }),
  ),
  post(
    '/agents/{agent}/packages/{package}/audiences',
    toolsBack,
    setAudiencesOperation,
    (call) => ({
      agent: param(call, 'agent'),
      package: param(call, 'package'),
      audiences: audiencesChosen(call.form),
    }),
    (_, call) => ({ text: `Saved audiences for ${param(call, 'package')}.` }),
  ),
];
