import { AGENT_FIELD, AGENT_INPUT, NO_INPUT, nameField } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * Browser backends — where agents' browser sessions run — as operations of the catalog:
 * registering one, granting it to an agent, and listing backends, grants and the live sessions
 * (never a key: only whether one is held).
 */

/** A browser backend as the API answers it. */
export interface BrowserBackendAnswer {
  readonly name: string;
  readonly kind: string;
  readonly development: boolean;
  readonly settings: Readonly<Record<string, unknown>>;
  /** Whether its key is held; null for a kind that takes none. */
  readonly api_key: { readonly present: boolean } | null;
}

/** An agent's browser grant, as the API answers it. */
export interface BrowserGrantAnswer {
  readonly agent: string;
  readonly backend: string;
  readonly allow_loopback: boolean;
}

/** A live browser session, as the API answers it. */
export interface BrowserSessionAnswer {
  readonly id: string;
  readonly run_id: string;
  readonly agent: string;
  readonly backend: string;
  readonly state: string;
  readonly run_status: string;
  readonly live_view_url: string | null;
  readonly age_seconds: number;
}

interface BrowsersAnswer {
  readonly backends: readonly BrowserBackendAnswer[];
  readonly grants: readonly BrowserGrantAnswer[];
  readonly sessions: readonly BrowserSessionAnswer[];
}

const BACKEND = nameField('the browser backend, by name');

function listLines(out: BrowsersAnswer): string[] {
  return [
    'Backends:',
    ...(out.backends.length === 0
      ? ['  none: mesh browsers add --kind local --name N --dev']
      : out.backends.map(
          (b) =>
            `  ${b.name}  ${b.kind}${b.development ? '  DEVELOPMENT ONLY' : ''}${b.api_key === null ? '' : `  key ${b.api_key.present ? 'present' : 'absent'}`}`,
        )),
    'Grants:',
    ...(out.grants.length === 0
      ? ['  none: mesh browsers grant --agent A --backend N']
      : out.grants.map(
          (g) => `  ${g.agent} → ${g.backend}${g.allow_loopback ? '  loopback allowed' : ''}`,
        )),
    'Live sessions:',
    ...(out.sessions.length === 0
      ? ['  none']
      : out.sessions.map(
          (s) =>
            `  ${s.id}  run ${s.run_id} (${s.run_status})  ${s.agent} on ${s.backend}  ${s.state}  age ${s.age_seconds} s`,
        )),
  ];
}

export const listBrowsersOperation = defineOperation({
  name: 'browsers.list',
  summary:
    'Browser backends (development ones marked), grants, and live browser sessions with their run, state and age',
  tag: 'browsers',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/browsers' },
  cli: { command: ['browsers', 'list'], print: listLines },
  async run(mesh): Promise<BrowsersAnswer> {
    const { describeBrowsers } = await import('./browser-admin.ts');
    return describeBrowsers(mesh);
  },
});

export const addBrowserBackendOperation = defineOperation({
  name: 'browsers.add',
  summary:
    'Register a browser backend: local (Debian Chromium on this machine; development only, needs development: true), or a vendor — cloudflare (Browser Run, with account_id), browserbase or steel — its API key stored encrypted',
  tag: 'browsers',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'kind'],
    properties: {
      name: { ...BACKEND, description: 'the name to register it under' },
      kind: {
        enum: ['local', 'cloudflare', 'browserbase', 'steel'],
        description:
          'local (Chromium on this machine), cloudflare (Browser Run), browserbase or steel',
      },
      development: {
        type: 'boolean',
        description:
          'acknowledges a development-only backend (local needs it); on a vendor, allows a loopback http base URL',
      },
      base_url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        description:
          "a vendor's API root, when not its own (a gateway; a loopback fake on a `development` backend)",
      },
      account_id: {
        type: 'string',
        minLength: 1,
        maxLength: 64,
        description: 'cloudflare: the account whose Browser Run is used',
      },
      project_id: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description: 'browserbase: the project sessions are billed to',
      },
      api_key: {
        type: 'string',
        minLength: 1,
        maxLength: 65536,
        description: "a vendor's API key (stored encrypted)",
      },
    },
  },
  errors: ['invalid_backend', 'backend_exists', 'development_only'],
  http: { method: 'POST', path: '/api/browsers/backends', status: 201 },
  cli: {
    command: ['browsers', 'add'],
    files: { api_key: 'api-key-file' },
    switches: ['development'],
    flags: { development: 'dev' },
    print: (b: BrowserBackendAnswer) => [
      `Added browser backend ${b.name} (${b.kind}${b.development ? ', development only' : ''}).`,
    ],
  },
  async run(mesh, input): Promise<BrowserBackendAnswer> {
    const { addBrowserBackend } = await import('./browser-admin.ts');
    const added = await addBrowserBackend(mesh, {
      name: input.name,
      kind: input.kind,
      ...(input.development === undefined ? {} : { development: input.development }),
      ...(input.base_url === undefined ? {} : { baseUrl: input.base_url }),
      ...(input.project_id === undefined ? {} : { projectId: input.project_id }),
      ...(input.account_id === undefined ? {} : { accountId: input.account_id }),
      // A key file's trailing newline is not part of the key.
      ...(input.api_key === undefined ? {} : { apiKey: input.api_key.trim() }),
    });
    return {
      name: added.name,
      kind: added.kind,
      development: added.development,
      settings: added.settings,
      api_key: added.kind === 'local' ? null : { present: true },
    };
  },
});

export const removeBrowserBackendOperation = defineOperation({
  name: 'browsers.remove',
  summary: 'Remove a browser backend with its grants and its API key',
  tag: 'browsers',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['backend'],
    properties: { backend: BACKEND },
  },
  errors: ['backend_not_found'],
  http: { method: 'DELETE', path: '/api/browsers/backends/{backend}', status: 204 },
  cli: {
    command: ['browsers', 'remove'],
    positionals: ['backend'],
    print: (_out: undefined, input) => [
      `Removed browser backend ${String(input['backend'])} and its grants.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const { removeBrowserBackend } = await import('./browser-admin.ts');
    await removeBrowserBackend(mesh, input.backend);
    return undefined;
  },
});

export const grantBrowserBackendOperation = defineOperation({
  name: 'browsers.grant',
  summary:
    "Grant an agent a browser backend (its browser tools are offered); with allow_loopback (development backends only) its sessions may reach this machine's loopback addresses. Replaces the agent's earlier grant",
  tag: 'browsers',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'backend'],
    properties: {
      agent: AGENT_FIELD,
      backend: BACKEND,
      allow_loopback: {
        type: 'boolean',
        description:
          'development only: the sessions may reach loopback addresses (private, link-local and metadata addresses stay refused)',
      },
    },
  },
  errors: ['agent_not_found', 'backend_not_found', 'development_only'],
  http: { method: 'PUT', path: '/api/agents/{agent}/browser-backend' },
  cli: {
    command: ['browsers', 'grant'],
    switches: ['allow_loopback'],
    flags: { allow_loopback: 'allow-loopback' },
    print: (g: BrowserGrantAnswer) => [
      `Granted ${g.agent} browser sessions on ${g.backend}${g.allow_loopback ? ', loopback addresses allowed' : ''}.`,
    ],
  },
  async run(mesh, input, caller): Promise<BrowserGrantAnswer> {
    const { grantBrowserBackend } = await import('./browser-admin.ts');
    return grantBrowserBackend(mesh, {
      agent: input.agent,
      backend: input.backend,
      allowLoopback: input.allow_loopback === true,
      operator: caller.actor,
    });
  },
});

export const revokeBrowserBackendOperation = defineOperation({
  name: 'browsers.revoke',
  summary:
    "Revoke an agent's browser backend: its browser tools are no longer offered; `revoked` says whether it had one",
  tag: 'browsers',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'DELETE', path: '/api/agents/{agent}/browser-backend' },
  cli: {
    command: ['browsers', 'revoke'],
    print: (out: { agent: string; revoked: boolean }) => [
      out.revoked ? `Revoked ${out.agent}'s browser backend.` : `${out.agent} had none.`,
    ],
  },
  async run(mesh, input): Promise<{ agent: string; revoked: boolean }> {
    const { revokeBrowserBackend } = await import('./browser-admin.ts');
    return { agent: input.agent, revoked: await revokeBrowserBackend(mesh, input.agent) };
  },
});

/** The browser backends' operations, in the order help lists them. */
export const browserOperations = [
  listBrowsersOperation,
  addBrowserBackendOperation,
  grantBrowserBackendOperation,
  revokeBrowserBackendOperation,
  removeBrowserBackendOperation,
] as const;
