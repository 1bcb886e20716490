import { expect } from 'vitest';
import { requireAgent } from '../../src/app/agents/agents.ts';
import { agentRegistry } from '../../src/app/packages/policy.ts';
import { callToolAsOperator, type OperatorCallResult } from '../../src/app/runs/operator-call.ts';
import type { TestServer } from './server.ts';

/** One row of an agent's catalog as the operator API shows it. */
export interface CatalogTool {
  readonly tool: string;
  readonly name: string;
  readonly usable: boolean;
  readonly withheld_reason: string | null;
  readonly output_schema: unknown;
}

/**
 * Registers a loopback MCP server through the operator API, connects `agent` to it and answers
 * the catalog Mesh read. These servers take no credential: the token is one Mesh sends and they
 * ignore.
 */
export async function connectOverApi(
  server: TestServer,
  input: { agent: string; slug: string; url: string },
): Promise<CatalogTool[]> {
  const added = await server.api('POST', '/api/mcp/providers', {
    slug: input.slug,
    url: input.url,
    allow_loopback_http: true,
  });
  expect(added.status, added.text).toBe(201);
  const connected = await server.api('PUT', `/api/agents/${input.agent}/mcp/${input.slug}/token`, {
    value: 'unused-by-this-server',
  });
  expect(connected.status, connected.text).toBe(200);
  const catalog = await server.api('GET', `/api/agents/${input.agent}/mcp/${input.slug}/catalog`);
  expect(catalog.status, catalog.text).toBe(200);
  return (catalog.json as { tools: CatalogTool[] }).tools;
}

/**
 * Holds that every listed tool is accounted for: offered to the agent (in the registry its turns
 * and operator calls use) or withheld with a stated reason, and that the catalog and the offer
 * agree on which is which.
 */
export async function expectEveryToolAccountedFor(
  server: TestServer,
  agent: string,
  tools: readonly CatalogTool[],
): Promise<void> {
  expect(tools.length).toBeGreaterThan(0);
  const { id } = await requireAgent(server.mesh, agent);
  const offer = await agentRegistry(server.mesh, id);
  for (const t of tools) {
    if (t.usable) {
      expect(t.withheld_reason, t.tool).toBeNull();
      expect(offer.registry.get(t.tool), `${t.tool} is usable but not offered`).toBeDefined();
    } else {
      expect(t.withheld_reason, t.tool).toEqual(expect.stringMatching(/\S/));
      expect(offer.registry.get(t.tool), `${t.tool} is withheld but offered`).toBeUndefined();
      expect(offer.withheld.find((w) => w.name === t.tool)?.reason).toBe(t.withheld_reason);
    }
  }
}

/**
 * Calls a tool as an operator, as `mesh tools call` and its API route do: a durable run through
 * the executor and the ledger.
 */
export async function callAsOperator(
  server: TestServer,
  agent: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<OperatorCallResult> {
  return callToolAsOperator(server.mesh, {
    agent,
    tool,
    arguments: JSON.stringify(args),
    operator: 'interop-test',
  });
}
