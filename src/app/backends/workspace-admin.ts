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
} from '../../store/workspaces.ts';
import { MeshError } from '../../tool/errors.ts';
import { requireAgent } from '../agents/agents.ts';
import type { Mesh } from '../mesh.ts';
import { workspaceBackends } from './families.ts';
import { rentedAdmin } from './rented-admin.ts';
import { WORKSPACE_KINDS } from './kinds.ts';

/** The operator's side of the execution layer: backends, grants, live workspaces. */

/** Registering, removing and revoking workspace backends, from their declaration. */
export const workspaceAdmin = rentedAdmin(WORKSPACE_KINDS, workspaceBackends, {
  insert: insertExecutionBackend,
  delete: deleteExecutionBackend,
  deleteGrant: deleteBackendGrant,
});

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
