import { randomUUID } from 'node:crypto';
import {
  deleteBrowserBackend,
  deleteBrowserGrant,
  insertBrowserBackend,
  listBrowserBackends,
  listBrowserGrants,
  listLiveBrowserSessions,
  upsertBrowserGrant,
  type BrowserBackendKind,
  type BrowserBackendRecord,
} from '../../store/browsers.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import { requireAgent } from '../agents/agents.ts';
import { checkBackendUrl } from './backend-url.ts';
import type { Mesh } from '../mesh.ts';
import { BROWSER_KINDS } from './browser-backends.ts';
import { BACKEND_NAME_PATTERN } from './workspace-admin.ts';
import { browserBackends } from './families.ts';

/** The operator's side of the browser layer: backends, grants, live sessions. */

/** A browser backend to register. */
export interface NewBrowserBackend {
  readonly name: string;
  readonly kind: string;
  /**
   * The operator's development setting: required for `local`; on a vendor, it allows a plain
   * http API URL on loopback (a gateway or fake on this machine).
   */
  readonly development?: boolean;
  /** A vendor's API root, when not its own (https; loopback http only with `development`). */
  readonly baseUrl?: string;
  /** Browserbase: the project sessions are billed to. */
  readonly projectId?: string;
  /** Cloudflare: the account whose Browser Run is used. */
  readonly accountId?: string;
  /** A vendor's API key, stored encrypted as the backend's secret. */
  readonly apiKey?: string;
}

/** Registers a browser backend. */
export async function addBrowserBackend(
  mesh: Mesh,
  input: NewBrowserBackend,
): Promise<BrowserBackendRecord> {
  if (!BACKEND_NAME_PATTERN.test(input.name))
    throw new MeshError(
      'invalid_backend',
      'a backend name is 1-63 lowercase letters, digits, "-" or "_"',
    );
  if (!(BROWSER_KINDS as readonly string[]).includes(input.kind))
    throw new MeshError(
      'invalid_backend',
      `unknown browser backend kind ${quoteName(input.kind)}; the kinds are ${BROWSER_KINDS.join(', ')}`,
    );
  const kind = input.kind as BrowserBackendKind;
  const development = input.development === true;
  const settings: Record<string, string> = {};
  if (kind === 'local') {
    if (!development)
      throw new MeshError(
        'development_only',
        'the local browser backend is for development only: add it with `development` set to say so',
        { field: 'input.development' },
      );
    if (
      input.apiKey !== undefined ||
      input.baseUrl !== undefined ||
      input.projectId !== undefined ||
      input.accountId !== undefined
    )
      throw new MeshError(
        'invalid_backend',
        'a local browser backend takes no API key, URL or project',
      );
  } else {
    if (input.apiKey === undefined || input.apiKey.trim() === '')
      throw new MeshError('invalid_backend', `a ${kind} backend needs its API key (\`api_key\`)`, {
        field: 'input.api_key',
      });
    if (input.baseUrl !== undefined)
      settings['base_url'] = checkBackendUrl(input.baseUrl, development, 'base_url');
    if (kind === 'cloudflare') {
      if (
        input.accountId === undefined ||
        !/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(input.accountId)
      )
        throw new MeshError(
          'invalid_backend',
          'a cloudflare browser backend needs its account id (`account_id`), letters, digits, "-" or "_"',
          { field: 'input.account_id' },
        );
      settings['account_id'] = input.accountId;
    } else if (input.accountId !== undefined)
      throw new MeshError('invalid_backend', `a ${kind} backend takes no account id`);
    if (input.projectId !== undefined && kind !== 'browserbase')
      throw new MeshError('invalid_backend', `a ${kind} backend takes no project id`);
    if (input.projectId !== undefined) {
      if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(input.projectId))
        throw new MeshError('invalid_backend', 'the project id is not a project id');
      settings['project_id'] = input.projectId;
    }
  }
  return browserBackends.register(
    mesh,
    (db) =>
      insertBrowserBackend(db, {
        id: randomUUID(),
        name: input.name,
        kind,
        development,
        settings,
      }),
    kind === 'local' ? undefined : (input.apiKey ?? '').trim(),
  );
}

/** Removes a browser backend with its grants and its key. */
export async function removeBrowserBackend(mesh: Mesh, name: string): Promise<void> {
  await browserBackends.remove(mesh, name, (db, backend) => deleteBrowserBackend(db, backend.id));
}

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

export async function revokeBrowserBackend(mesh: Mesh, agentName: string): Promise<boolean> {
  const agent = await requireAgent(mesh, agentName);
  return deleteBrowserGrant(mesh.db, agent.id);
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
