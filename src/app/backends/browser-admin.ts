import {
  deleteBrowserBackend,
  deleteBrowserGrant,
  insertBrowserBackend,
  listBrowserBackends,
  listBrowserGrants,
  listLiveBrowserSessions,
  upsertBrowserGrant,
} from '../../store/browsers.ts';
import { MeshError } from '../../tool/errors.ts';
import { requireAgent } from '../agents/agents.ts';
import type { Mesh } from '../mesh.ts';
import { BROWSER_KINDS } from './kinds.ts';
import { rentedAdmin } from './rented-admin.ts';
import { browserBackends } from './families.ts';

/** The operator's side of the browser layer: backends, grants, live sessions. */

/** Registering, removing and revoking browser backends, from their declaration. */
export const browserAdmin = rentedAdmin(BROWSER_KINDS, browserBackends, {
  insert: insertBrowserBackend,
  delete: deleteBrowserBackend,
  deleteGrant: deleteBrowserGrant,
});

/** Grants an agent a browser backend (replacing an earlier grant). */
export async function grantBrowserBackend(
  mesh: Mesh,
  input: { agent: string; backend: string; allowLoopback: boolean; operator: string },
): Promise<{ agent: string; backend: string; allow_loopback: boolean }> {
  const agent = await requireAgent(mesh, input.agent);
  const backend = await browserBackends.require(mesh, input.backend);
  if (input.allowLoopback && !backend.development)
    throw new MeshError(
      'development_only',
      `reaching loopback addresses is a development setting; ${backend.name} is not a development backend`,
    );
  const grant = await upsertBrowserGrant(mesh.db, {
    agentId: agent.id,
    backendId: backend.id,
    allowLoopback: input.allowLoopback,
    grantedBy: input.operator,
  });
  return { agent: agent.name, backend: backend.name, allow_loopback: grant.allowLoopback };
}

/** Backends, grants, and live sessions with their age. */
export async function describeBrowsers(mesh: Mesh) {
  const [backends, grants, live] = await Promise.all([
    listBrowserBackends(mesh.db),
    listBrowserGrants(mesh.db),
    listLiveBrowserSessions(mesh.db),
  ]);
  const now = mesh.clock.now().getTime();
  return {
    backends: await Promise.all(
      backends.map(async (b) => ({
        name: b.name,
        kind: b.kind,
        development: b.development,
        settings: b.settings,
        api_key: await browserBackends
          .key(mesh, b)
          .then((meta) => (meta === null ? null : { present: meta !== undefined })),
      })),
    ),
    grants: grants.map((g) => ({
      agent: g.agentName,
      backend: g.backendName,
      allow_loopback: g.allowLoopback,
    })),
    sessions: live.map((s) => ({
      id: s.id,
      run_id: s.runId,
      agent: s.agentName,
      backend: s.backendName,
      state: s.state,
      run_status: s.runStatus,
      live_view_url: s.liveViewUrl,
      age_seconds: Math.max(0, Math.round((now - new Date(s.createdAt).getTime()) / 1000)),
    })),
  };
}
