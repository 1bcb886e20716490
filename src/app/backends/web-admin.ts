import { randomUUID } from 'node:crypto';
import { capabilitiesOf, DEFAULT_BASE_URLS } from '../../web/adapters/index.ts';
import { QUERY_PROVIDER_KINDS, type QueryProviderKind } from '../../web/provider.ts';
import {
  deleteQueryGrant,
  deleteQueryProvider,
  insertQueryProvider,
  listQueryGrants,
  listQueryProviders,
  setQueryProviderCeiling,
  upsertQueryGrant,
  type QueryProviderRecord,
} from '../../store/query-providers.ts';
import { checkSecretValue } from '../../secrets/index.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import { requireAgent } from '../agents/agents.ts';
import type { Mesh } from '../mesh.ts';
import { checkBackendUrl } from './backend-url.ts';
import { webProviders } from './families.ts';

/** The operator's side of the query providers: register, set ceilings, grant, list. */

/** A provider's name becomes part of no tool name, but it is shown and typed: keep it plain. */
export const PROVIDER_NAME_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
export const DEFAULT_MAX_CALLS_PER_RUN = 20;
const MAX_CEILING = 10_000;

export interface NewWebProvider {
  readonly name: string;
  readonly kind: string;
  /** Default: the vendor's own API root. */
  readonly baseUrl?: string;
  /** Development only: plain http to a loopback base URL (the same setting as remote MCP's). */
  readonly allowLoopbackHttp?: boolean;
  readonly maxCallsPerRun?: number;
  /** Cloudflare: the account the Browser Run API is called for. */
  readonly accountId?: string;
  /** The provider's API key, stored encrypted as the provider's secret. */
  readonly apiKey: string;
}

function invalid(message: string): MeshError {
  return new MeshError('invalid_web_provider', message);
}

function checkCeiling(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_CEILING)
    throw invalid(`the call ceiling is a whole number from 1 to ${MAX_CEILING}`);
  return value;
}

/** Registers a provider with its key as one unit of work. */
export async function addWebProvider(
  mesh: Mesh,
  input: NewWebProvider,
): Promise<QueryProviderRecord> {
  if (!PROVIDER_NAME_PATTERN.test(input.name) || input.name.length > 32)
    throw invalid(
      'a provider name is 1-32 lowercase letters and digits, words joined by "_" (e.g. exa or brave_team)',
    );
  if (!(QUERY_PROVIDER_KINDS as readonly string[]).includes(input.kind))
    throw invalid(
      `unknown provider kind ${quoteName(input.kind)}; the kinds are ${QUERY_PROVIDER_KINDS.join(', ')}`,
    );
  const kind = input.kind as QueryProviderKind;
  const allowLoopbackHttp = input.allowLoopbackHttp === true;
  const baseUrl = checkBackendUrl(input.baseUrl ?? DEFAULT_BASE_URLS[kind], {
    field: 'base_url',
    development: allowLoopbackHttp,
    developmentField: 'allow_loopback_http',
    code: 'invalid_web_provider',
  });
  const apiKey = input.apiKey.trim();
  if (apiKey === '') throw invalid('the API key is empty');
  checkSecretValue(apiKey, 'line', 'api_key');
  const settings: Record<string, string> = {};
  if (kind === 'cloudflare') {
    if (input.accountId === undefined)
      throw invalid('a cloudflare provider needs its account id (`account_id`)');
    if (!/^[0-9a-f]{32}$/.test(input.accountId))
      throw invalid('the account id is not a Cloudflare account id (32 hex digits)');
    settings['accountId'] = input.accountId;
  } else if (input.accountId !== undefined) {
    throw invalid(`a ${kind} provider takes no account id`);
  }
  const maxCallsPerRun = checkCeiling(input.maxCallsPerRun ?? DEFAULT_MAX_CALLS_PER_RUN);
  return webProviders.register(
    mesh,
    (db) =>
      insertQueryProvider(db, {
        id: randomUUID(),
        name: input.name,
        kind,
        baseUrl,
        allowLoopbackHttp,
        requestTimeoutMs: 30_000,
        maxCallsPerRun,
        settings,
      }),
    apiKey,
  );
}

const requireWebProvider = (mesh: Mesh, name: string) => webProviders.require(mesh, name);

/** Removes a provider with its grants and its key. */
export async function removeWebProvider(mesh: Mesh, name: string): Promise<void> {
  await webProviders.remove(mesh, name, (db, provider) => deleteQueryProvider(db, provider.id));
}

/** Sets the per-run call ceiling: runs created from now on copy it; runs under way keep theirs. */
export async function setWebProvider(
  mesh: Mesh,
  input: { provider: string; maxCallsPerRun: number },
): Promise<{ name: string; maxCallsPerRun: number }> {
  const provider = await requireWebProvider(mesh, input.provider);
  const updated = await setQueryProviderCeiling(
    mesh.db,
    provider.id,
    checkCeiling(input.maxCallsPerRun),
  );
  return { name: provider.name, maxCallsPerRun: updated?.maxCallsPerRun ?? input.maxCallsPerRun };
}

export async function grantWebProvider(
  mesh: Mesh,
  input: { agent: string; provider: string; operator: string },
): Promise<{ agent: string; provider: string; serves: readonly string[] }> {
  const agent = await requireAgent(mesh, input.agent);
  const provider = await requireWebProvider(mesh, input.provider);
  await upsertQueryGrant(mesh.db, {
    agentId: agent.id,
    providerId: provider.id,
    grantedBy: input.operator,
  });
  return { agent: agent.name, provider: provider.name, serves: servedVerbs(provider.kind) };
}

export async function revokeWebProvider(
  mesh: Mesh,
  input: { agent: string; provider: string },
): Promise<boolean> {
  const agent = await requireAgent(mesh, input.agent);
  const provider = await requireWebProvider(mesh, input.provider);
  return deleteQueryGrant(mesh.db, agent.id, provider.id);
}

/** The web verbs a provider kind can serve. */
export function servedVerbs(kind: QueryProviderKind): string[] {
  const caps = capabilitiesOf(kind);
  return [...(caps.search ? ['web_search'] : []), ...(caps.read ? ['web_read'] : [])];
}

/** Providers (never their keys: only whether one is captured) and grants. */
export async function describeWeb(mesh: Mesh) {
  const [providers, grants] = await Promise.all([
    listQueryProviders(mesh.db),
    listQueryGrants(mesh.db),
  ]);
  return {
    providers: await Promise.all(
      providers.map(async (p) => ({
        name: p.name,
        kind: p.kind,
        baseUrl: p.baseUrl,
        allowLoopbackHttp: p.allowLoopbackHttp,
        maxCallsPerRun: p.maxCallsPerRun,
        serves: servedVerbs(p.kind),
        settings: p.settings,
        apiKey: (await webProviders.key(mesh, p)) !== undefined,
      })),
    ),
    grants: grants.map((g) => ({
      agent: g.agentName,
      provider: g.providerName,
      grantedBy: g.grantedBy,
      grantedAt: new Date(g.grantedAt).toISOString(),
    })),
  };
}
