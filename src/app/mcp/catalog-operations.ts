import type { Mesh } from '../mesh.ts';
import { AGENT_FIELD, listOrAll } from '../operations/fields.ts';
import { InvalidInputError } from '../operations/input.ts';
import { defineOperation } from '../operations/operation.ts';
import { PROVIDER_FIELD } from './provider-operations.ts';
import { isoText } from '../views.ts';

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
      import('../agents/agents.ts'),
      import('./catalog.ts'),
      import('./views.ts'),
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

/*
 * The operator's hold on what a connection offers: re-reading its catalog, marking it reviewed,
 * excluding a tool or marking it a legacy query, and the connection's scopes.
 */

/** A catalog read's findings (`CatalogCheck`). */
export interface CheckAnswer {
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  readonly pages: number;
  readonly stoppedBecause?: string;
}

/** The input of an operation on one connection. */
export const BINDING = {
  type: 'object',
  additionalProperties: false,
  required: ['agent', 'provider'],
  properties: { agent: AGENT_FIELD, provider: PROVIDER_FIELD },
} as const;

const TOOL_FIELD = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'the remote tool, by its name on the server (or as the agent sees it, slug__name)',
} as const;

/** A remote tool named either way: `search` or `idx__search`. */
function remoteName(tool: string): string {
  const at = tool.indexOf('__');
  return at === -1 ? tool : tool.slice(at + 2);
}

/** The agent an operation names (its module imported when an operation runs). */
export async function agentNamed(mesh: Mesh, name: string) {
  return (await import('../agents/agents.ts')).requireAgent(mesh, name);
}

export const checkCatalogOperation = defineOperation({
  name: 'mcp.check',
  summary: 'Re-read the catalog now: what was added, changed and removed since the last read',
  tag: 'mcp',
  input: BINDING,
  errors: ['agent_not_found', 'binding_not_found', 'mcp_transport_failed'],
  http: { method: 'POST', path: '/api/agents/{agent}/mcp/{provider}/catalog/check' },
  cli: {
    command: ['mcp', 'check'],
    print: (c: CheckAnswer, input) => [
      `Read the ${String(input['provider'])} catalog of ${String(input['agent'])}: ${c.added.length} added, ${c.changed.length} changed, ${c.removed.length} removed (${c.pages} page${c.pages === 1 ? '' : 's'}${c.stoppedBecause ? `; stopped: ${c.stoppedBecause}` : ''}).`,
      // Each by name, as --json lists them: a changed tool is called as an effect until reviewed.
      ...(c.added.length > 0 ? [`  added: ${c.added.join(', ')}`] : []),
      ...(c.changed.length > 0
        ? [`  changed: ${c.changed.join(', ')} (called as effects until reviewed: mesh mcp review)`]
        : []),
      ...(c.removed.length > 0 ? [`  removed: ${c.removed.join(', ')}`] : []),
    ],
  },
  async run(mesh, input): Promise<CheckAnswer> {
    const { recheckCatalog } = await import('./catalog.ts');
    return recheckCatalog(mesh, await agentNamed(mesh, input.agent), input.provider);
  },
});

export const reviewCatalogOperation = defineOperation({
  name: 'mcp.review',
  summary: 'Mark the catalog as reviewed as it is now',
  tag: 'mcp',
  input: BINDING,
  errors: ['agent_not_found', 'binding_not_found'],
  http: { method: 'POST', path: '/api/agents/{agent}/mcp/{provider}/catalog/review', status: 204 },
  cli: {
    command: ['mcp', 'review'],
    print: (_out: undefined, input) => [
      `Marked the ${String(input['provider'])} catalog of ${String(input['agent'])} as reviewed.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const { reviewCatalog } = await import('./catalog.ts');
    await reviewCatalog(mesh, await agentNamed(mesh, input.agent), input.provider);
    return undefined;
  },
});

export const setRemoteToolOperation = defineOperation({
  name: 'mcp.tool',
  summary:
    'Exclude or include a remote tool, or mark its current definition as a legacy query (lost when it changes)',
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'provider', 'tool'],
    properties: {
      agent: AGENT_FIELD,
      provider: PROVIDER_FIELD,
      tool: TOOL_FIELD,
      excluded: { type: 'boolean', description: 'withhold the tool from the agent (or offer it)' },
      legacy_query: {
        type: 'boolean',
        description: 'treat its current definition as a query, though it declares no hint',
      },
    },
  },
  errors: ['agent_not_found', 'binding_not_found', 'tool_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/mcp/{provider}/tools/{tool}', status: 204 },
  cli: {
    command: ['mcp', 'tool'],
    positionals: ['tool'],
    aliases: {
      exclude: { excluded: true },
      include: { excluded: false },
      'legacy-query': { legacy_query: true },
    },
    print: (_out: undefined, input) => {
      const tool = remoteName(String(input['tool']));
      return [
        ...(input['excluded'] === undefined
          ? []
          : [
              `${input['excluded'] ? 'Excluded' : 'Included'} ${tool} for ${String(input['agent'])}.`,
            ]),
        ...(input['legacy_query'] === undefined
          ? []
          : [
              `${tool} ${input['legacy_query'] ? 'keeps query semantics while its definition is unchanged' : 'has effect semantics again'}.`,
            ]),
      ];
    },
  },
  async run(mesh, input): Promise<undefined> {
    if (input.excluded === undefined && input.legacy_query === undefined)
      throw new InvalidInputError('give `excluded`, `legacy_query` or both', 'input.excluded');
    const { excludeTool, markLegacyQuery } = await import('./catalog.ts');
    const agent = await agentNamed(mesh, input.agent);
    const tool = remoteName(input.tool);
    if (input.excluded !== undefined)
      await excludeTool(mesh, agent, input.provider, tool, input.excluded);
    if (input.legacy_query !== undefined)
      await markLegacyQuery(mesh, agent, input.provider, tool, input.legacy_query);
    return undefined;
  },
});

/** A scope: a list of values, or null for no limit. */
function scopeField<const I, const D extends string>(items: I, maxItems: number, description: D) {
  return {
    anyOf: [{ type: 'array', items, maxItems, uniqueItems: true }, { type: 'null' }],
    description,
  } as const;
}

export const setScopesOperation = defineOperation({
  name: 'mcp.scope',
  summary:
    'Limit a connection to conversation audiences and/or conversations (null: no limit; absent: kept)',
  tag: 'mcp',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'provider'],
    properties: {
      agent: AGENT_FIELD,
      provider: PROVIDER_FIELD,
      audiences: scopeField(
        { enum: ['direct', 'shared'] },
        2,
        'the audiences it is offered in (direct, shared; all for no limit)',
      ),
      conversation_ids: scopeField(
        {
          type: 'string',
          pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
        },
        1000,
        'the conversations it is offered in, by id (all for no limit)',
      ),
    },
  },
  errors: ['agent_not_found', 'binding_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/mcp/{provider}/scopes', status: 204 },
  cli: {
    command: ['mcp', 'scope'],
    flags: { conversation_ids: 'conversations' },
    readers: { audiences: listOrAll, conversation_ids: listOrAll },
    print: (_out: undefined, input) => [
      `Set the scopes of ${String(input['agent'])}'s ${String(input['provider'])} connection.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    if (input.audiences === undefined && input.conversation_ids === undefined)
      throw new InvalidInputError(
        'give `audiences`, `conversation_ids` or both',
        'input.audiences',
      );
    const { setScopes } = await import('./catalog.ts');
    await setScopes(mesh, await agentNamed(mesh, input.agent), input.provider, {
      ...(input.audiences === undefined ? {} : { audiences: input.audiences }),
      ...(input.conversation_ids === undefined ? {} : { conversationIds: input.conversation_ids }),
    });
    return undefined;
  },
});

export const mcpCatalogOperations = [
  mcpCatalogOperation,
  checkCatalogOperation,
  reviewCatalogOperation,
  setRemoteToolOperation,
  setScopesOperation,
] as const;
