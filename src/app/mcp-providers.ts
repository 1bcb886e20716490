import { randomUUID } from 'node:crypto';
import type { AgentRecord } from '../run/records.ts';
import {
  findToolProvider,
  getBinding,
  insertToolProvider,
  type BindingRecord,
  type ToolProviderRecord,
} from '../store/mcp.ts';
import { MeshError } from '../tool/errors.ts';
import type { Mesh } from './mesh.ts';

/** Remote MCP servers as the operator registers them, and an agent's binding to one. */

/** A provider slug: what namespaces its tools (`<slug>__<tool>`). Never the server's own name. */
export const SLUG_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Registers a remote MCP server. Plain http only to loopback, and only when asked for. */
export async function addToolProvider(
  mesh: Mesh,
  input: { slug: string; url: string; allowLoopbackHttp?: boolean },
): Promise<ToolProviderRecord> {
  if (!SLUG_PATTERN.test(input.slug) || input.slug.length > 32)
    throw new MeshError(
      'invalid_tool_provider',
      'a provider slug is 1-32 lowercase letters and digits, single underscores between words',
    );
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new MeshError('invalid_tool_provider', 'the provider URL is not a URL');
  }
  if (url.username || url.password)
    throw new MeshError('invalid_tool_provider', 'the provider URL must not carry credentials');
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && input.allowLoopbackHttp)) {
    throw new MeshError(
      'invalid_tool_provider',
      url.protocol === 'http:' && loopbackHttp
        ? 'plain http is allowed only to loopback with --allow-loopback-http (development)'
        : 'the provider URL must be https',
    );
  }
  return insertToolProvider(mesh.db, {
    id: randomUUID(),
    slug: input.slug,
    url: url.toString(),
    allowLoopbackHttp: input.allowLoopbackHttp === true,
  });
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
