import { randomUUID } from 'node:crypto';
import { formatEgressRule, parseEgressRule } from '../../exec/backend.ts';
import { LOCAL_CAPABILITIES } from '../../exec/backends/local.ts';
import {
  deleteBackendGrant,
  deleteExecutionBackend,
  insertExecutionBackend,
  listBackendGrants,
  listExecutionBackends,
  listLiveWorkspaces,
  upsertBackendGrant,
  type ExecutionBackendRecord,
} from '../../store/workspaces.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import { requireAgent } from '../agents/agents.ts';
import { checkBackendUrl } from './backend-url.ts';
import type { Mesh } from '../mesh.ts';
import { workspaceBackends } from './families.ts';

/** The operator's side of the execution layer: backends, grants, live workspaces. */

export const BACKEND_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const KINDS = ['local', 'e2b'] as const;
export type BackendKind = (typeof KINDS)[number];

/** A backend to register. */
export interface NewBackend {
  readonly name: string;
  readonly kind: string;
  /** The operator's development setting: required for, and only meaningful on, `local`. */
  readonly development?: boolean;
  /** E2B: the API's base URL (https; loopback http only with `development`). */
  readonly apiUrl?: string;
  /** E2B: one URL for every sandbox's daemon (a self-hosted proxy; a loopback fake with --dev). */
  readonly sandboxUrl?: string;
  /** E2B: the sandbox template. */
  readonly template?: string;
  /** E2B: the API key, stored as the backend's secret. */
  readonly apiKey?: string;
}

/** Registers a backend; its API key (E2B) is captured with it as one unit of work. */
export async function addBackend(mesh: Mesh, input: NewBackend): Promise<ExecutionBackendRecord> {
  if (!BACKEND_NAME_PATTERN.test(input.name))
    throw new MeshError(
      'invalid_backend',
      'a backend name is 1-63 lowercase letters, digits, "-" or "_"',
    );
  if (!(KINDS as readonly string[]).includes(input.kind))
    throw new MeshError(
      'invalid_backend',
      `unknown backend kind ${quoteName(input.kind)}; the kinds are ${KINDS.join(', ')}`,
    );
  const kind = input.kind as BackendKind;
  const development = input.development === true;
  if (kind === 'local' && !development)
    throw new MeshError(
      'development_only',
      'the local backend is for development only: add it with `development` set to say so',
      { field: 'input.development' },
    );
  const settings: Record<string, string> = {};
  if (kind === 'e2b') {
    if (!input.apiKey || input.apiKey.trim() === '')
      throw new MeshError('invalid_backend', 'an e2b backend needs its API key (`api_key`)', {
        field: 'input.api_key',
      });
    if (input.apiUrl !== undefined)
      settings['api_url'] = checkBackendUrl(input.apiUrl, development, 'api_url');
    if (input.sandboxUrl !== undefined)
      settings['sandbox_url'] = checkBackendUrl(input.sandboxUrl, development, 'sandbox_url');
    if (input.template !== undefined) {
      if (!/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/.test(input.template))
        throw new MeshError('invalid_backend', 'the template is not a template name or id');
      settings['template'] = input.template;
    }
  } else if (input.apiKey !== undefined || input.apiUrl !== undefined) {
    throw new MeshError('invalid_backend', 'a local backend takes no API URL or key');
  }
  return workspaceBackends.register(
    mesh,
    (db) =>
      insertExecutionBackend(db, {
        id: randomUUID(),
        name: input.name,
        kind,
        development,
        settings,
      }),
    kind === 'e2b' ? (input.apiKey ?? '').trim() : undefined,
  );
}

/** Removes a backend with its grants and its key. */
export async function removeBackend(mesh: Mesh, name: string): Promise<void> {
  await workspaceBackends.remove(mesh, name, (db, backend) =>
    deleteExecutionBackend(db, backend.id),
  );
}

const requireBackend = (mesh: Mesh, name: string) => workspaceBackends.require(mesh, name);

/** Grants an agent a backend and its workspaces' egress allowlist (replacing an earlier one). */
export async function grantBackend(
  mesh: Mesh,
  input: { agent: string; backend: string; allowHosts: readonly string[]; operator: string },
) {
  const agent = await requireAgent(mesh, input.agent);
  const backend = await requireBackend(mesh, input.backend);
  const egress: string[] = [];
  for (const [i, host] of input.allowHosts.entries()) {
    const rule = parseEgressRule(host);
    if (!rule)
      throw new MeshError(
        'invalid_egress',
        `allowed host ${i + 1} is not a host name or IP, with an optional :port`,
      );
    egress.push(formatEgressRule(rule));
  }
  if (egress.length > 64) throw new MeshError('invalid_egress', 'at most 64 allowed hosts');
  const grant = await upsertBackendGrant(mesh.db, {
    agentId: agent.id,
    backendId: backend.id,
    egress: [...new Set(egress)],
    grantedBy: input.operator,
  });
  return { agent: agent.name, backend: backend.name, egress: grant.egress };
}

export async function revokeBackend(mesh: Mesh, agentName: string): Promise<boolean> {
  const agent = await requireAgent(mesh, agentName);
  return deleteBackendGrant(mesh.db, agent.id);
}

/** Backends (with whether each is development-only), grants, and live workspaces. */
export async function describeWorkspaces(mesh: Mesh) {
  const [backends, grants, live] = await Promise.all([
    listExecutionBackends(mesh.db),
    listBackendGrants(mesh.db),
    listLiveWorkspaces(mesh.db),
  ]);
  const now = mesh.clock.now().getTime();
  return {
    backends: await Promise.all(
      backends.map(async (b) => ({
        name: b.name,
        kind: b.kind,
        development: b.development || (b.kind === 'local' && LOCAL_CAPABILITIES.development),
        settings: b.settings,
        apiKey: await workspaceBackends
          .key(mesh, b)
          .then((meta) => (meta === null ? null : meta !== undefined)),
      })),
    ),
    grants: grants.map((g) => ({ agent: g.agentName, backend: g.backendName, egress: g.egress })),
    workspaces: live.map((w) => ({
      id: w.id,
      run: w.runId,
      agent: w.agentName,
      backend: w.backendName,
      state: w.state,
      runStatus: w.runStatus,
      ageSeconds: Math.max(0, Math.round((now - new Date(w.createdAt).getTime()) / 1000)),
      computeSeconds: Math.round(w.computeMs / 100) / 10,
    })),
  };
}
