import { AGENT_FIELD, nameField, NO_INPUT } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * Web providers — the hosted search and reading APIs behind web_search and web_read — as
 * operations of the catalog: registering one with its key, its per-run ceiling, granting it to
 * agents, and listing what is registered and granted (never a key: only whether one is held).
 */

/** A web provider as the API answers it. */
export interface WebProviderAnswer {
  readonly name: string;
  readonly kind: string;
  readonly base_url: string;
  readonly allow_loopback_http: boolean;
  readonly max_calls_per_run: number;
  readonly serves: readonly string[];
  readonly settings: Readonly<Record<string, unknown>>;
  readonly api_key: { readonly present: boolean };
}

/** A grant of a web provider to an agent, as the API answers it. */
export interface WebGrantAnswer {
  readonly agent: string;
  readonly provider: string;
  readonly granted_by: string;
  readonly granted_at: string;
}

const PROVIDER = nameField('the web provider, by name');
const CEILING = {
  type: 'integer',
  minimum: 1,
  maximum: 10000,
  description: 'at most this many calls to the provider in one run (retries count)',
} as const;

/** A grant's input: which agent, which provider. */
const GRANT_INPUT = {
  type: 'object',
  additionalProperties: false,
  required: ['agent', 'provider'],
  properties: { agent: AGENT_FIELD, provider: PROVIDER },
} as const;

/** The provider's line in `mesh web list`. */
function providerLine(p: WebProviderAnswer): string {
  return `  ${p.name}  ${p.kind}  ${p.base_url}  serves ${p.serves.join(', ')}  ${p.max_calls_per_run} calls/run  key ${p.api_key.present ? 'present' : 'absent'}${p.allow_loopback_http ? '  LOOPBACK HTTP (development)' : ''}`;
}

export const listWebOperation = defineOperation({
  name: 'web.list',
  summary:
    'Web providers (kind, base URL, what each serves, per-run call ceiling, whether a key is captured; never the key) and their grants',
  tag: 'web',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/web' },
  cli: {
    command: ['web', 'list'],
    print: (out: {
      providers: readonly WebProviderAnswer[];
      grants: readonly WebGrantAnswer[];
    }) => [
      'Providers:',
      ...(out.providers.length === 0
        ? ['  none: mesh web add --kind exa --name exa --api-key-file F']
        : out.providers.map(providerLine)),
      'Grants:',
      ...(out.grants.length === 0
        ? ['  none: mesh web grant --agent A --provider N']
        : out.grants.map((g) => `  ${g.agent} → ${g.provider}  (by ${g.granted_by})`)),
    ],
  },
  async run(mesh): Promise<{ providers: WebProviderAnswer[]; grants: WebGrantAnswer[] }> {
    const { describeWeb } = await import('./web-admin.ts');
    const state = await describeWeb(mesh);
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
});

export const addWebOperation = defineOperation({
  name: 'web.add',
  summary:
    'Register a web provider (exa, brave, tavily or cloudflare) with its API key, stored encrypted; base_url https, or loopback http with allow_loopback_http',
  tag: 'web',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'kind', 'api_key'],
    properties: {
      name: { ...PROVIDER, description: 'the name to register it under' },
      kind: { enum: ['exa', 'brave', 'tavily', 'cloudflare'], description: 'the vendor' },
      base_url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        description: "the API's root (the vendor's own unless given)",
      },
      allow_loopback_http: {
        type: 'boolean',
        description: 'development only: plain http to a loopback base URL',
      },
      max_calls_per_run: { ...CEILING, description: `${CEILING.description}; 20 unless given` },
      account_id: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: 'the Cloudflare account the key belongs to (cloudflare needs it)',
      },
      api_key: { type: 'string', minLength: 1, maxLength: 65536, description: 'the API key' },
    },
  },
  errors: ['invalid_web_provider', 'tool_provider_exists'],
  http: { method: 'POST', path: '/api/web/providers', status: 201 },
  cli: {
    command: ['web', 'add'],
    files: { api_key: 'api-key-file' },
    switches: ['allow_loopback_http'],
    print: (p: WebProviderAnswer) => [
      `Added web provider ${p.name} (${p.kind} at ${p.base_url}; serves ${p.serves.join(' and ')}; at most ${p.max_calls_per_run} calls per run).`,
    ],
  },
  async run(mesh, input): Promise<WebProviderAnswer> {
    const { addWebProvider, servedVerbs } = await import('./web-admin.ts');
    const added = await addWebProvider(mesh, {
      name: input.name,
      kind: input.kind,
      // A key file's trailing newline is not part of the key.
      apiKey: input.api_key.trim(),
      ...(input.base_url === undefined ? {} : { baseUrl: input.base_url }),
      ...(input.allow_loopback_http === undefined
        ? {}
        : { allowLoopbackHttp: input.allow_loopback_http }),
      ...(input.max_calls_per_run === undefined ? {} : { maxCallsPerRun: input.max_calls_per_run }),
      ...(input.account_id === undefined ? {} : { accountId: input.account_id }),
    });
    return {
      name: added.name,
      kind: added.kind,
      base_url: added.baseUrl,
      allow_loopback_http: added.allowLoopbackHttp,
      max_calls_per_run: added.maxCallsPerRun,
      serves: servedVerbs(added.kind),
      settings: added.settings,
      api_key: { present: true },
    };
  },
});

export const setWebOperation = defineOperation({
  name: 'web.set',
  summary: "Set a web provider's per-run call ceiling (retries count)",
  tag: 'web',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['provider', 'max_calls_per_run'],
    properties: { provider: PROVIDER, max_calls_per_run: CEILING },
  },
  errors: ['web_provider_not_found'],
  http: { method: 'PUT', path: '/api/web/providers/{provider}/ceiling' },
  cli: {
    command: ['web', 'set'],
    positionals: ['provider'],
    print: (out: { name: string; max_calls_per_run: number }) => [
      `Web provider ${out.name}: at most ${out.max_calls_per_run} calls per run.`,
    ],
  },
  async run(mesh, input): Promise<{ name: string; max_calls_per_run: number }> {
    const { setWebProvider } = await import('./web-admin.ts');
    const updated = await setWebProvider(mesh, {
      provider: input.provider,
      maxCallsPerRun: input.max_calls_per_run,
    });
    return { name: updated.name, max_calls_per_run: updated.maxCallsPerRun };
  },
});

export const removeWebOperation = defineOperation({
  name: 'web.remove',
  summary: 'Remove a web provider with its grants and its API key',
  tag: 'web',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['provider'],
    properties: { provider: PROVIDER },
  },
  errors: ['web_provider_not_found'],
  http: { method: 'DELETE', path: '/api/web/providers/{provider}', status: 204 },
  cli: {
    command: ['web', 'remove'],
    positionals: ['provider'],
    print: (_out: undefined, input) => [
      `Removed web provider ${String(input['provider'])}, its key and its grants.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const { removeWebProvider } = await import('./web-admin.ts');
    await removeWebProvider(mesh, input.provider);
    return undefined;
  },
});

export const grantWebOperation = defineOperation({
  name: 'web.grant',
  summary:
    'Grant an agent a web provider: web_search and/or web_read are offered through it (the first granted provider that can serve a verb serves it)',
  tag: 'web',
  input: GRANT_INPUT,
  errors: ['agent_not_found', 'web_provider_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/web-providers/{provider}' },
  cli: {
    command: ['web', 'grant'],
    print: (out: { agent: string; provider: string; serves: readonly string[] }) => [
      `Granted ${out.agent} web provider ${out.provider} (${out.serves.join(' and ')}).`,
    ],
  },
  async run(mesh, input, caller) {
    const { grantWebProvider } = await import('./web-admin.ts');
    return grantWebProvider(mesh, { ...input, operator: caller.actor });
  },
});

export const revokeWebOperation = defineOperation({
  name: 'web.revoke',
  summary: "Revoke an agent's web provider; `revoked` says whether it was granted",
  tag: 'web',
  input: GRANT_INPUT,
  errors: ['agent_not_found', 'web_provider_not_found'],
  http: { method: 'DELETE', path: '/api/agents/{agent}/web-providers/{provider}' },
  cli: {
    command: ['web', 'revoke'],
    print: (out: { agent: string; provider: string; revoked: boolean }) => [
      out.revoked
        ? `Revoked ${out.agent}'s web provider ${out.provider}.`
        : `${out.agent} was not granted ${out.provider}.`,
    ],
  },
  async run(mesh, input): Promise<{ agent: string; provider: string; revoked: boolean }> {
    const { revokeWebProvider } = await import('./web-admin.ts');
    const revoked = await revokeWebProvider(mesh, input);
    return { agent: input.agent, provider: input.provider, revoked };
  },
});

/** The web providers' operations, in the order help lists them. */
export const webOperations = [
  listWebOperation,
  addWebOperation,
  setWebOperation,
  grantWebOperation,
  revokeWebOperation,
  removeWebOperation,
] as const;
