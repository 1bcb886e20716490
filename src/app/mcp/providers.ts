import { randomUUID } from 'node:crypto';
import type { AgentRecord } from '../../run/records.ts';
import {
  agentsBoundTo,
  deleteToolProviderRow,
  findToolProvider,
  getBinding,
  insertToolProvider,
  setToolProviderTimeout,
  type BindingRecord,
  type ToolProviderRecord,
} from '../../store/mcp.ts';
import { checkUrlAtRegistration } from '../../egress/address-policy.ts';
import { hasCode, MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { someNames } from '../agents/agents.ts';
import { MAX_MCP_TIMEOUT_SECONDS } from '../../mcp/records.ts';

/** Remote MCP servers as the operator registers them, and an agent's binding to one. */

/** A provider slug: what namespaces its tools (`<slug>__<tool>`). Never the server's own name. */
export const SLUG_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** Whether a URL's host is this machine: the only place the development http allowance reaches. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A remote server's request timeout when the operator sets none. */
export const DEFAULT_MCP_TIMEOUT_SECONDS = 60;

function timeoutMs(seconds: number | undefined): number {
  const s = seconds ?? DEFAULT_MCP_TIMEOUT_SECONDS;
  if (!Number.isInteger(s) || s < 1 || s > MAX_MCP_TIMEOUT_SECONDS)
    throw new MeshError(
      'invalid_tool_provider',
      `a request timeout is a whole number of seconds from 1 to ${MAX_MCP_TIMEOUT_SECONDS}`,
      { field: 'timeout_seconds' },
    );
  return s * 1000;
}

/** Registers a remote MCP server. Plain http only to loopback, and only when asked for. */
export async function addToolProvider(
  mesh: Mesh,
  input: { slug: string; url: string; allowLoopbackHttp?: boolean; timeoutSeconds?: number },
): Promise<ToolProviderRecord> {
  const requestTimeoutMs = timeoutMs(input.timeoutSeconds);
  if (!SLUG_PATTERN.test(input.slug) || input.slug.length > 32)
    throw new MeshError(
      'invalid_tool_provider',
      'a provider slug is 1-32 lowercase letters and digits, single underscores between words',
    );
  const refuse = (message: string, field = 'url') =>
    new MeshError('invalid_tool_provider', message, { field });
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw refuse('the provider URL is not a URL');
  }
  if (url.username || url.password) throw refuse('the provider URL must not carry credentials');
  const loopback = isLoopbackHost(url.hostname);
  const loopbackHttp = url.protocol === 'http:' && loopback;
  // The development allowance is for a loopback server only; it is never stored on another URL.
  if (input.allowLoopbackHttp === true && !loopback)
    throw refuse(
      'allow_loopback_http applies only to a loopback URL (localhost, 127.0.0.0/8 or ::1)',
      'allow_loopback_http',
    );
  if (url.protocol !== 'https:' && !(loopbackHttp && input.allowLoopbackHttp)) {
    throw refuse(
      url.protocol === 'http:' && loopbackHttp
        ? 'plain http is allowed only to loopback with --allow-loopback-http (development)'
        : 'the provider URL must be https',
    );
  }
  // The egress checks a connection applies, as far as they go without DNS: an address literal
  // outside the public space (private, link-local, metadata, reserved) is refused now, not at the
  // first connection. A name is resolved and checked on every connection.
  try {
    checkUrlAtRegistration(url, { allowLoopbackHttp: input.allowLoopbackHttp === true });
  } catch (error) {
    if (hasCode(error, 'egress_refused'))
      throw refuse(`the provider URL is refused: ${error.message}`);
    throw error;
  }
  return insertToolProvider(mesh.db, {
    id: randomUUID(),
    slug: input.slug,
    url: url.toString(),
    allowLoopbackHttp: input.allowLoopbackHttp === true && loopback,
    requestTimeoutMs,
  });
}

/** Sets how long one request to a registered server may take, in whole seconds. */
export async function setToolProviderTimeoutSeconds(
  mesh: Mesh,
  slug: string,
  seconds: number,
): Promise<ToolProviderRecord> {
  const requestTimeoutMs = timeoutMs(seconds);
  const provider = await requireToolProvider(mesh, slug);
  const updated = await setToolProviderTimeout(mesh.db, provider.id, requestTimeoutMs);
  if (!updated) throw new MeshError('tool_provider_not_found', `no MCP provider named ${slug}`);
  return updated;
}

export async function requireToolProvider(
  mesh: Mesh,
  slugOrId: string,
): Promise<ToolProviderRecord> {
  const provider = await findToolProvider(mesh.db, slugOrId);
  if (!provider)
    throw new MeshError(
      'tool_provider_not_found',
      `no tool provider named ${JSON.stringify(slugOrId)}`,
    );
  return provider;
}

export async function requireBinding(
  mesh: Mesh,
  agent: AgentRecord,
  provider: ToolProviderRecord,
): Promise<BindingRecord> {
  const binding = await getBinding(mesh.db, agent.id, provider.id);
  if (!binding)
    throw new MeshError(
      'binding_not_found',
      `${agent.name} is not connected to ${provider.slug}; connect it first`,
    );
  return binding;
}

/** The provider a slug names and the agent's binding to it, or a typed refusal. */
export async function requireConnection(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<{ provider: ToolProviderRecord; binding: BindingRecord }> {
  const provider = await requireToolProvider(mesh, providerSlug);
  return { provider, binding: await requireBinding(mesh, agent, provider) };
}

/**
 * Removes a registered remote server with its catalog rows, in one transaction. Refused while an
 * agent is connected to it: disconnecting is what retires that agent's credential for it.
 */
export async function removeToolProvider(mesh: Mesh, slugOrId: string): Promise<void> {
  const provider = await requireToolProvider(mesh, slugOrId);
  await mesh.transaction(async ({ db, secrets }) => {
    const bound = await agentsBoundTo(db, provider.id);
    if (bound.length > 0)
      throw new MeshError(
        'tool_provider_in_use',
        `tool provider ${provider.slug} is connected to ${bound.length} agent${bound.length === 1 ? '' : 's'} (${someNames(bound)}); disconnect them first`,
      );
    // A credential left by an interrupted connect is retired with the server it was for.
    await secrets.retireOwners({
      ownerType: 'agent_tool_provider',
      ownerIdSuffix: `:${provider.id}`,
    });
    await deleteToolProviderRow(db, provider.id);
  });
  for (const key of [...mesh.mcp.definitions.keys()])
    if (key.startsWith(`${provider.id}\n`)) mesh.mcp.definitions.delete(key);
}
