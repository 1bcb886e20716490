import { AGENT_FIELD, AGENT_INPUT, NO_INPUT, nameField } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';

/*
 * Workspace backends — where agents' code runs — as operations of the catalog: registering one,
 * granting it to an agent with the hosts its workspaces may reach, and listing backends, grants
 * and the live workspaces (never a key: only whether one is held).
 */

/** A workspace backend as the API answers it. */
export interface BackendAnswer {
  readonly name: string;
  readonly kind: string;
  readonly development: boolean;
  readonly settings: Readonly<Record<string, unknown>>;
  /** Whether its key is held; null for a kind that takes none. */
  readonly api_key: { readonly present: boolean } | null;
}

/** An agent's workspace grant, as the API answers it. */
export interface BackendGrantAnswer {
  readonly agent: string;
  readonly backend: string;
  readonly egress: readonly string[];
}

/** A live workspace, as the API answers it. */
export interface WorkspaceAnswer {
  readonly id: string;
  readonly run_id: string;
  readonly agent: string;
  readonly backend: string;
  readonly state: string;
  readonly run_status: string;
  readonly age_seconds: number;
  readonly compute_seconds: number;
}

interface WorkspacesAnswer {
  readonly backends: readonly BackendAnswer[];
  readonly grants: readonly BackendGrantAnswer[];
  readonly workspaces: readonly WorkspaceAnswer[];
}

const BACKEND = nameField('the workspace backend, by name');
function listLines(out: WorkspacesAnswer): string[] {
  return [
    'Backends:',
    ...(out.backends.length === 0
      ? ['  none: mesh workspaces add --kind local --name N --dev']
      : out.backends.map(
          (b) =>
            `  ${b.name}  ${b.kind}${b.development ? '  DEVELOPMENT ONLY' : ''}${b.api_key === null ? '' : `  key ${b.api_key.present ? 'present' : 'absent'}`}`,
        )),
    'Grants:',
    ...(out.grants.length === 0
      ? ['  none: mesh workspaces grant --agent A --backend N']
      : out.grants.map(
          (g) => `  ${g.agent} → ${g.backend}  egress: ${g.egress.join(', ') || 'none'}`,
        )),
    'Live workspaces:',
    ...(out.workspaces.length === 0
      ? ['  none']
      : out.workspaces.map(
          (w) =>
            `  ${w.id}  run ${w.run_id} (${w.run_status})  ${w.agent} on ${w.backend}  age ${w.age_seconds} s  compute ${w.compute_seconds} s`,
        )),
  ];
}

export const listWorkspacesOperation = defineOperation({
  name: 'workspaces.list',
  summary:
    'Workspace backends (development ones marked), grants with their egress allowlists, and live workspaces with run, age and compute-seconds',
  tag: 'workspaces',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/workspaces' },
  cli: { command: ['workspaces', 'list'], print: listLines },
  async run(mesh): Promise<WorkspacesAnswer> {
    const { describeWorkspaces } = await import('./workspace-admin.ts');
    const state = await describeWorkspaces(mesh);
    return {
      backends: state.backends.map((b) => ({
        name: b.name,
        kind: b.kind,
        development: b.development,
        settings: b.settings,
        api_key: b.apiKey === null ? null : { present: b.apiKey },
      })),
      grants: state.grants,
      workspaces: state.workspaces.map((w) => ({
        id: w.id,
        run_id: w.run,
        agent: w.agent,
        backend: w.backend,
        state: w.state,
        run_status: w.runStatus,
        age_seconds: w.ageSeconds,
        compute_seconds: w.computeSeconds,
      })),
    };
  },
});

export const addWorkspaceBackendOperation = defineOperation({
  name: 'workspaces.add',
  summary:
    'Register a workspace backend: local (bubblewrap; development only, needs development: true) or e2b (its API key stored encrypted)',
  tag: 'workspaces',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'kind'],
    properties: {
      name: { ...BACKEND, description: 'the name to register it under' },
      kind: { enum: ['local', 'e2b'], description: 'local (bubblewrap) or e2b' },
      development: {
        type: 'boolean',
        description: 'acknowledges a development-only backend (local needs it)',
      },
      api_url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        description: "e2b: the control plane's URL (E2B's own unless given)",
      },
      sandbox_url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        description: "e2b: the sandboxes' URL, for a self-hosted or loopback deployment",
      },
      template: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description: 'e2b: the sandbox template, by name or id',
      },
      api_key: {
        type: 'string',
        minLength: 1,
        maxLength: 65536,
        description: 'e2b: the API key',
      },
    },
  },
  errors: ['invalid_backend', 'backend_exists'],
  http: { method: 'POST', path: '/api/workspaces/backends', status: 201 },
  cli: {
    command: ['workspaces', 'add'],
    files: { api_key: 'api-key-file' },
    switches: ['development'],
    flags: { development: 'dev' },
    print: (b: BackendAnswer) => [
      `Added workspace backend ${b.name} (${b.kind}${b.development ? ', development only' : ''}).`,
    ],
  },
  async run(mesh, input): Promise<BackendAnswer> {
    const { addBackend } = await import('./workspace-admin.ts');
    const added = await addBackend(mesh, {
      name: input.name,
      kind: input.kind,
      ...(input.development === undefined ? {} : { development: input.development }),
      ...(input.api_url === undefined ? {} : { apiUrl: input.api_url }),
      ...(input.sandbox_url === undefined ? {} : { sandboxUrl: input.sandbox_url }),
      ...(input.template === undefined ? {} : { template: input.template }),
      // A key file's trailing newline is not part of the key.
      ...(input.api_key === undefined ? {} : { apiKey: input.api_key.trim() }),
    });
    return {
      name: added.name,
      kind: added.kind,
      development: added.development,
      settings: added.settings,
      api_key: added.kind === 'e2b' ? { present: true } : null,
    };
  },
});

export const removeWorkspaceBackendOperation = defineOperation({
  name: 'workspaces.remove',
  summary: 'Remove a workspace backend with its grants and its API key',
  tag: 'workspaces',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['backend'],
    properties: { backend: BACKEND },
  },
  errors: ['backend_not_found'],
  http: { method: 'DELETE', path: '/api/workspaces/backends/{backend}', status: 204 },
  cli: {
    command: ['workspaces', 'remove'],
    positionals: ['backend'],
    print: (_out: undefined, input) => [
      `Removed workspace backend ${String(input['backend'])} and its grants.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const { removeBackend } = await import('./workspace-admin.ts');
    await removeBackend(mesh, input.backend);
    return undefined;
  },
});

export const grantWorkspaceBackendOperation = defineOperation({
  name: 'workspaces.grant',
  summary:
    "Grant an agent a workspace backend and the hosts its workspaces may reach (host or host:port); replaces the agent's earlier grant",
  tag: 'workspaces',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'backend'],
    properties: {
      agent: AGENT_FIELD,
      backend: BACKEND,
      allow_hosts: {
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: 260 },
        maxItems: 64,
        description: "a host (or host:port) the agent's workspaces may reach",
      },
    },
  },
  errors: ['agent_not_found', 'backend_not_found', 'invalid_egress'],
  http: { method: 'PUT', path: '/api/agents/{agent}/workspace-backend' },
  cli: {
    command: ['workspaces', 'grant'],
    flags: { allow_hosts: 'allow-host' },
    print: (g: BackendGrantAnswer) => [
      `Granted ${g.agent} workspaces on ${g.backend}; egress allowed to ${g.egress.length === 0 ? 'no host' : g.egress.join(', ')}.`,
    ],
  },
  async run(mesh, input, caller): Promise<BackendGrantAnswer> {
    const { grantBackend } = await import('./workspace-admin.ts');
    return grantBackend(mesh, {
      agent: input.agent,
      backend: input.backend,
      allowHosts: input.allow_hosts ?? [],
      operator: caller.actor,
    });
  },
});

export const revokeWorkspaceBackendOperation = defineOperation({
  name: 'workspaces.revoke',
  summary:
    "Revoke an agent's workspace backend: its workspace tools are no longer offered; `revoked` says whether it had one",
  tag: 'workspaces',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'DELETE', path: '/api/agents/{agent}/workspace-backend' },
  cli: {
    command: ['workspaces', 'revoke'],
    print: (out: { agent: string; revoked: boolean }) => [
      out.revoked ? `Revoked ${out.agent}'s workspace backend.` : `${out.agent} had none.`,
    ],
  },
  async run(mesh, input): Promise<{ agent: string; revoked: boolean }> {
    const { revokeBackend } = await import('./workspace-admin.ts');
    return { agent: input.agent, revoked: await revokeBackend(mesh, input.agent) };
  },
});

/** The workspace backends' operations, in the order help lists them. */
export const workspaceOperations = [
  listWorkspacesOperation,
  addWorkspaceBackendOperation,
  grantWorkspaceBackendOperation,
  revokeWorkspaceBackendOperation,
  removeWorkspaceBackendOperation,
] as const;
