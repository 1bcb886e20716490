import { listAgents } from '../../app/agents/reads.ts';
import { webProviderKeyOperation } from '../../app/backends/operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import {
  addWebProvider,
  describeWeb,
  grantWebProvider,
  removeWebProvider,
  revokeWebProvider,
  setWebProvider,
} from '../../app/backends/web-admin.ts';
import { MeshError } from '../../tool/errors.ts';
import { field, post, type UiRoute } from './ui-route.ts';
import { webPage } from './web-pages.ts';

function ceilingField(raw: string): number | undefined {
  const text = raw.trim();
  if (text === '') return undefined;
  if (!/^\d{1,6}$/.test(text))
    throw new MeshError('invalid_web_provider', 'calls per run is a whole number');
  return Number(text);
}

/** The web page: query providers, their ceilings, and grants. */
export const webRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/web',
    handle: async ({ mesh, session }) => ({
      page: webPage(
        session,
        await describeWeb(mesh),
        (await listAgents(mesh)).map((a) => a.name),
      ),
    }),
  },
  post(
    '/web/providers',
    () => '/web',
    async ({ mesh, form }) => {
      const baseUrl = field(form, 'base_url').trim();
      const accountId = field(form, 'account_id').trim();
      const maxCallsPerRun = ceilingField(field(form, 'max_calls_per_run'));
      const added = await addWebProvider(mesh, {
        name: field(form, 'name').trim(),
        kind: field(form, 'kind'),
        apiKey: field(form, 'api_key'),
        allowLoopbackHttp: field(form, 'allow_loopback_http') === 'true',
        ...(baseUrl === '' ? {} : { baseUrl }),
        ...(accountId === '' ? {} : { accountId }),
        ...(maxCallsPerRun === undefined ? {} : { maxCallsPerRun }),
      });
      return { text: `Added web provider ${added.name}.` };
    },
  ),
  post(
    '/web/providers/{provider}/ceiling',
    () => '/web',
    async ({ mesh, params, form }) => {
      const maxCallsPerRun = ceilingField(field(form, 'max_calls_per_run'));
      if (maxCallsPerRun === undefined)
        throw new MeshError('invalid_web_provider', 'calls per run is required');
      const updated = await setWebProvider(mesh, {
        provider: params['provider'] ?? '',
        maxCallsPerRun,
      });
      return { text: `Web provider ${updated.name}: ${updated.maxCallsPerRun} calls per run.` };
    },
  ),
  post(
    '/web/providers/{provider}/key',
    () => '/web',
    async ({ mesh, params, form, session }) => {
      const out = await invokeOperation(
        mesh,
        webProviderKeyOperation,
        { provider: params['provider'] ?? '', value: field(form, 'value') },
        session,
      );
      return { text: `Replaced the API key of ${out.name} (now version ${out.version}).` };
    },
  ),
  post(
    '/web/providers/{provider}/delete',
    () => '/web',
    async ({ mesh, params }) => {
      await removeWebProvider(mesh, params['provider'] ?? '');
      return { text: `Removed web provider ${params['provider'] ?? ''}.` };
    },
  ),
  post(
    '/web/grants',
    () => '/web',
    async ({ mesh, form, session }) => {
      const granted = await grantWebProvider(mesh, {
        agent: field(form, 'agent').trim(),
        provider: field(form, 'provider').trim(),
        operator: session.actor,
      });
      return { text: `Granted ${granted.agent} web provider ${granted.provider}.` };
    },
  ),
  post(
    '/web/grants/revoke',
    () => '/web',
    async ({ mesh, form }) => {
      const agent = field(form, 'agent').trim();
      const provider = field(form, 'provider').trim();
      await revokeWebProvider(mesh, { agent, provider });
      return { text: `Revoked ${agent}'s web provider ${provider}.` };
    },
  ),
];
