import { AGENT_FIELD, NO_INPUT, nameField } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';
import { BROWSER_KINDS } from './kinds.ts';
import { rentedOperations, type RentedBackendAnswer } from './rented-operations.ts';

/*
 * Browser backends — where agents' browser sessions run — as operations of the catalog:
 * registering one, granting it to an agent, and listing backends, grants and the live sessions
 * (never a key: only whether one is held).
 */

/** A browser backend as the API answers it. */
export type BrowserBackendAnswer = RentedBackendAnswer;

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

const rented = rentedOperations({
  group: 'browsers',
  kinds: BROWSER_KINDS,
  backendsPath: '/api/browsers/backends',
  grantPath: '/api/agents/{agent}/browser-backend',
  addSummary:
    'Register a browser backend: local (Debian Chromium on this machine; development only, needs development: true), or a vendor — cloudflare (Browser Run, with account_id), browserbase or steel — its API key stored encrypted',
  revoked: 'its browser tools are no longer offered',
  admin: async () => (await import('./browser-admin.ts')).browserAdmin,
});

export const addBrowserBackendOperation = rented.add;
export const removeBrowserBackendOperation = rented.remove;
export const revokeBrowserBackendOperation = rented.revoke;

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

/** The browser backends' operations, in the order help lists them. */
export const browserOperations = [
  listBrowsersOperation,
  addBrowserBackendOperation,
  grantBrowserBackendOperation,
  revokeBrowserBackendOperation,
  removeBrowserBackendOperation,
] as const;
