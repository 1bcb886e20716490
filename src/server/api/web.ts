import {
  addWebProvider,
  describeWeb,
  grantWebProvider,
  removeWebProvider,
  revokeWebProvider,
  setWebProvider,
} from '../../app/web-admin.ts';
import { closedObject } from '../router.ts';
import { NAME, route, SECRET_VALUE, type Route } from './context.ts';

const CEILING = { type: 'integer', minimum: 1, maximum: 10000 } as const;

/** Query providers: the hosted web search and reading APIs behind web_search and web_read. */
export const webRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/web',
    operationId: 'listWebProviders',
    summary:
      'Web providers (kind, base URL, what each serves, per-run call ceiling, whether a key is captured; never the key) and their grants',
    tag: 'web',
    handle: async ({ context }) => {
      const state = await describeWeb(context.mesh);
      return {
        providers: state.providers.map((p) => ({
          name: p.name,
          kind: p.kind,
          base_url: p.baseUrl,
          allow_loopback_http: p.allowLoopbackHttp,
          max_calls_per_run: p.maxCallsPerRun,
          serves: p.serves,
          settings: p.settings,
          api_key: { present: p.apiKey },
        })),
        grants: state.grants.map((g) => ({
          agent: g.agent,
          provider: g.provider,
          granted_by: g.grantedBy,
          granted_at: g.grantedAt,
        })),
      };
    },
  }),
  route({
    method: 'POST',
    path: '/api/web/providers',
    operationId: 'addWebProvider',
    summary:
      'Register a web provider (exa, brave, tavily or cloudflare) with its API key, stored encrypted; base_url https, or loopback http with allow_loopback_http',
    tag: 'web',
    status: 201,
    body: closedObject(
      {
        name: NAME,
        kind: { enum: ['exa', 'brave', 'tavily', 'cloudflare'] },
        base_url: { type: 'string', minLength: 1, maxLength: 2000 },
        allow_loopback_http: { type: 'boolean' },
        max_calls_per_run: CEILING,
        account_id: { type: 'string', minLength: 1, maxLength: 64 },
        api_key: SECRET_VALUE,
      },
      ['name', 'kind', 'api_key'],
    ),
    handle: async ({ context, body }) => {
      const added = await addWebProvider(context.mesh, {
        name: body.name,
        kind: body.kind,
        apiKey: body.api_key,
        ...(body.base_url === undefined ? {} : { baseUrl: body.base_url }),
        ...(body.allow_loopback_http === undefined
          ? {}
          : { allowLoopbackHttp: body.allow_loopback_http }),
        ...(body.max_calls_per_run === undefined ? {} : { maxCallsPerRun: body.max_calls_per_run }),
        ...(body.account_id === undefined ? {} : { accountId: body.account_id }),
      });
      return {
        name: added.name,
        kind: added.kind,
        base_url: added.baseUrl,
        max_calls_per_run: added.maxCallsPerRun,
      };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/web/providers/{provider}/ceiling',
    operationId: 'setWebProvider',
    summary: "Set a web provider's per-run call ceiling (retries count)",
    tag: 'web',
    body: closedObject({ max_calls_per_run: CEILING }, ['max_calls_per_run']),
    handle: async ({ context, params, body }) => {
      const updated = await setWebProvider(context.mesh, {
        provider: params['provider'] ?? '',
        maxCallsPerRun: body.max_calls_per_run,
      });
      return { name: updated.name, max_calls_per_run: updated.maxCallsPerRun };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/web/providers/{provider}',
    operationId: 'removeWebProvider',
    summary: 'Remove a web provider with its grants and its API key',
    tag: 'web',
    status: 204,
    handle: async ({ context, params }) => {
      await removeWebProvider(context.mesh, params['provider'] ?? '');
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/web-providers/{provider}',
    operationId: 'grantWebProvider',
    summary:
      'Grant an agent a web provider: web_search and/or web_read are offered through it (the first granted provider that can serve a verb serves it)',
    tag: 'web',
    handle: async ({ context, params }) =>
      grantWebProvider(context.mesh, {
        agent: params['agent'] ?? '',
        provider: params['provider'] ?? '',
        operator: context.actor,
      }),
  }),
  route({
    method: 'DELETE',
    path: '/api/agents/{agent}/web-providers/{provider}',
    operationId: 'revokeWebProvider',
    summary: "Revoke an agent's web provider",
    tag: 'web',
    status: 204,
    handle: async ({ context, params }) => {
      await revokeWebProvider(context.mesh, {
        agent: params['agent'] ?? '',
        provider: params['provider'] ?? '',
      });
    },
  }),
];
