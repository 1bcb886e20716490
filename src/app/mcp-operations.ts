import { defineOperation } from './operations/operation.ts';
import { isoText } from './views.ts';

/** A connection's catalog as the API answers it (`bindingJson`, `catalogEntryJson`). */
export interface CatalogAnswer {
  readonly connection: Record<string, unknown> & {
    readonly catalog_checked_at: Date | string | null;
    readonly catalog_error: string | null;
  };
  readonly tools: readonly (Record<string, unknown> & {
    readonly tool: string;
    readonly status: string;
    readonly semantics: string;
    readonly fingerprint: string;
    readonly withheld_reason: string | null;
  })[];
}

const when = (t: Date | string | null) => (t === null ? 'never' : isoText(t));

export const mcpCatalogOperation = defineOperation({
  name: 'mcp.catalog',
  summary:
    "The tools the agent's account sees on a remote server, with fingerprints, semantics and what changed since the last review",
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'provider'],
    properties: {
      agent: { type: 'string', minLength: 1, maxLength: 200, description: 'the agent, by name' },
      provider: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'the remote server, by slug',
      },
      refresh: {
        type: 'boolean',
        description: 'read the catalog from the server first, rather than as last recorded',
      },
    },
  },
  errors: ['agent_not_found', 'binding_not_found', 'mcp_transport_failed'],
  http: { method: 'GET', path: '/api/agents/{agent}/mcp/{provider}/catalog' },
  cli: {
    command: ['mcp', 'catalog'],
    switches: ['refresh'],
    print: (view: CatalogAnswer) => [
      ...(view.connection.catalog_error
        ? [
            `last check failed at ${when(view.connection.catalog_checked_at)}: ${view.connection.catalog_error}`,
          ]
        : []),
      ...view.tools.map(
        (t) =>
          `${t.tool.padEnd(40)} ${t.status.padEnd(8)} ${t.semantics.padEnd(6)} ${t.fingerprint.slice(0, 16)}${t.withheld_reason ? `  withheld: ${t.withheld_reason}` : ''}`,
      ),
      ...(view.tools.length === 0 ? ['No tools listed.'] : []),
    ],
  },
  async run(mesh, input): Promise<CatalogAnswer> {
    const [{ requireAgent }, mcp, { bindingJson, catalogEntryJson }] = await Promise.all([
      import('./agents.ts'),
      import('./mcp-catalog.ts'),
      import('./mcp-views.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    if (input.refresh === true) await mcp.recheckCatalog(mesh, agent, input.provider);
    const view = await mcp.catalogView(mesh, agent, input.provider);
    return {
      connection: bindingJson({
        ...view.binding,
        provider: view.provider,
      }) as CatalogAnswer['connection'],
      tools: view.tools.map((t) => catalogEntryJson(t) as CatalogAnswer['tools'][number]),
    };
  },
});
