import { AGENT_FIELD, NO_INPUT, nameField } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';
import { rentedOperations, type RentedBackendAnswer } from './rented-operations.ts';
import { WORKSPACE_KINDS } from './kinds.ts';

/*
 * Workspace backends — where agents' code runs — as operations of the catalog: registering one,
 * granting it to an agent with the hosts its workspaces may reach, and listing backends, grants
 * and the live workspaces (never a key: only whether one is held).
 */

/** A workspace backend as the API answers it. */
export type BackendAnswer = RentedBackendAnswer;

const rented = rentedOperations({
  group: 'workspaces',
  kinds: WORKSPACE_KINDS,
  backendsPath: '/api/workspaces/backends',
  grantPath: '/api/agents/{agent}/workspace-backend',
  addSummary:
    'Register a workspace backend: local (bubblewrap; development only, needs development: true) or e2b (its API key stored encrypted)',
  revoked: 'its workspace tools are no longer offered',
  admin: async () => (await import('./workspace-admin.ts')).workspaceAdmin,
});

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

export const addWorkspaceBackendOperation = rented.add;
export const removeWorkspaceBackendOperation = rented.remove;
export const revokeWorkspaceBackendOperation = rented.revoke;

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

/** The workspace backends' operations, in the order help lists them. */
export const workspaceOperations = [
  listWorkspacesOperation,
  addWorkspaceBackendOperation,
  grantWorkspaceBackendOperation,
  revokeWorkspaceBackendOperation,
  removeWorkspaceBackendOperation,
] as const;
