import { listAgents } from '../../app/agents/reads.ts';
import { webProviderKeyOperation } from '../../app/backends/operations.ts';
import { describeWeb } from '../../app/backends/web-admin.ts';
import {
  addWebOperation,
  grantWebOperation,
  removeWebOperation,
  revokeWebOperation,
  setWebOperation,
} from '../../app/backends/web-operations.ts';
import { field, optional, param, post, wholeNumber, type UiRoute } from './ui-route.ts';
import { webPage } from './web-pages.ts';

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
    addWebOperation,
    ({ form }) => ({
      name: field(form, 'name').trim(),
      kind: field(form, 'kind'),
      api_key: field(form, 'api_key'),
      allow_loopback_http: field(form, 'allow_loopback_http') === 'true',
      ...optional(form, 'base_url'),
      ...optional(form, 'account_id'),
      ...wholeNumber(form, 'max_calls_per_run'),
    }),
    (_, { form }) => ({ text: `Added web provider ${field(form, 'name').trim()}.` }),
  ),
  post(
    '/web/providers/{provider}/ceiling',
    () => '/web',
    setWebOperation,
    (call) => ({
      provider: param(call, 'provider'),
      ...wholeNumber(call.form, 'max_calls_per_run'),
    }),
    (_, call) => ({
      text: `Web provider ${param(call, 'provider')}: ${field(call.form, 'max_calls_per_run').trim()} calls per run.`,
    }),
  ),
  post(
    '/web/providers/{provider}/key',
    () => '/web',
    webProviderKeyOperation,
    (call) => ({ provider: param(call, 'provider'), value: field(call.form, 'value') }),
    (out) => ({ text: `Replaced the API key of ${out.name} (now version ${out.version}).` }),
  ),
  post(
    '/web/providers/{provider}/delete',
    () => '/web',
    removeWebOperation,
    (call) => ({ provider: param(call, 'provider') }),
    (_, call) => ({ text: `Removed web provider ${param(call, 'provider')}.` }),
  ),
  post(
    '/web/grants',
    () => '/web',
    grantWebOperation,
    ({ form }) => ({
      agent: field(form, 'agent').trim(),
      provider: field(form, 'provider').trim(),
    }),
    (_, { form }) => ({
      text: `Granted ${field(form, 'agent').trim()} web provider ${field(form, 'provider').trim()}.`,
    }),
  ),
  post(
    '/web/grants/revoke',
    () => '/web',
    revokeWebOperation,
    ({ form }) => ({
      agent: field(form, 'agent').trim(),
      provider: field(form, 'provider').trim(),
    }),
    (_, { form }) => ({
      text: `Revoked ${field(form, 'agent').trim()}'s web provider ${field(form, 'provider').trim()}.`,
    }),
  ),
];
