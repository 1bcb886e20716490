import type { Mesh } from '../app/mesh.ts';
import {
  addModelProvider,
  agentPackages,
  captureAgentSecret,
  createAgent,
  describeProviders,
  packageView,
  packageViews,
  requireAgent,
  requirePackage,
  resetAgentConfig,
  retireAgentSecret,
  setAgentAudiences,
  setAgentConfig,
  setAgentToolEnabled,
  setProviderKey,
  type NewProvider,
} from '../app/operator.ts';
import { chat } from '../app/turns.ts';
import {
  agentJson,
  agentPackageJson,
  conversationJson,
  messageJson,
  providerJson,
  runJson,
  runSummaryJson,
} from '../app/views.ts';
import type { JsonSchema } from '../model/json.ts';
import {
  getArtifact,
  getConversation,
  listAgents,
  listConversations,
  listMessages,
  listRuns,
} from '../app/queries.ts';
import type { OperatorTokenRecord } from '../app/records.ts';
import { MeshError } from '../tool/errors.ts';
import { HttpError } from './http.ts';
import { isUuid, UUID_SOURCE } from './ids.ts';
import { openApiDocument } from './openapi.ts';
import type { ApiRoute } from './router.ts';
import { mcpRoutes } from './api-mcp.ts';

/** What every API handler runs with: the Mesh and the operator whose token was presented. */
export interface ApiContext {
  readonly mesh: Mesh;
  readonly operator: OperatorTokenRecord;
  readonly version: string;
  /** This server's origin as the request reached it. */
  readonly origin: string;
}

type Route = ApiRoute<ApiContext>;

/** A closed object schema: unknown fields are refused, naming them. */
function body(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: 'object', additionalProperties: false, required, properties };
}

const NAME: JsonSchema = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' };
const SECRET_VALUE: JsonSchema = { type: 'string', minLength: 1, maxLength: 65536 };
const LIMIT = {
  limit: {
    description: 'How many to return (1-200, default 50).',
    schema: { type: 'integer', minimum: 1, maximum: 200 },
  },
};

function limitOf(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return 50;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 200)
    throw new HttpError(400, 'invalid_query', 'limit must be an integer from 1 to 200');
  return n;
}

/** The operator an API call acts as, for message actors and audit. */
function actorOf(operator: OperatorTokenRecord): string {
  return `operator:${operator.label}:${operator.id.slice(0, 8)}`;
}

async function runOr404(mesh: Mesh, id: string) {
  const run = isUuid(id) ? await mesh.ledger.run(id) : undefined;
  if (!run) throw new MeshError('run_not_found', 'no run with that id');
  return run;
}

/** Every route of the JSON API, in the order the document lists them. */
export const apiRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This API, described as an OpenAPI 3.1 document',
    tag: 'meta',
    handle: async ({ context }) =>
      openApiDocument(apiRoutes, {
        title: 'Mesh operator API',
        version: context.version,
      }),
  },
  {
    method: 'GET',
    path: '/api/agents',
    operationId: 'listAgents',
    summary: 'List agents',
    tag: 'agents',
    handle: async ({ context }) => ({
      agents: (await listAgents(context.mesh)).map(agentJson),
    }),
  },
  {
    method: 'POST',
    path: '/api/agents',
    operationId: 'createAgent',
    summary: 'Create an agent, optionally bound to a model provider and model',
    tag: 'agents',
    status: 201,
    body: body(
      {
        name: NAME,
        provider: { type: 'string', minLength: 1, maxLength: 200 },
        model: { type: 'string', minLength: 1, maxLength: 200 },
        persona: { type: 'string', maxLength: 20000 },
      },
      ['name'],
    ),
    handle: async ({ context, body: b }) => {
      const input = b as { name: string; provider?: string; model?: string; persona?: string };
      return agentJson(await createAgent(context.mesh, input));
    },
  },
  {
    method: 'GET',
    path: '/api/agents/{agent}',
    operationId: 'getAgent',
    summary: 'One agent, by name or id',
    tag: 'agents',
    handle: async ({ context, params }) =>
      agentJson(await requireAgent(context.mesh, params['agent'] ?? '')),
  },
  {
    method: 'GET',
    path: '/api/agents/{agent}/packages',
    operationId: 'listAgentPackages',
    summary:
      'Every package as installed for an agent: enablement, config values, secret presence, and per audience whether each tool is offered (or why not)',
    tag: 'policy',
    handle: async ({ context, params }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      return { packages: (await agentPackages(context.mesh, agent)).map(agentPackageJson) };
    },
  },
  {
    method: 'PUT',
    path: '/api/agents/{agent}/tools/{tool}',
    operationId: 'setAgentTool',
    summary: 'Enable or disable (opt out of) a built-in tool for an agent',
    tag: 'policy',
    status: 204,
    body: body({ enabled: { type: 'boolean' } }, ['enabled']),
    handle: async ({ context, params, body: b }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      await setAgentToolEnabled(
        context.mesh,
        agent,
        params['tool'] ?? '',
        (b as { enabled: boolean }).enabled,
      );
    },
  },
  {
    method: 'PUT',
    path: '/api/agents/{agent}/packages/{package}/config/{key}',
    operationId: 'setAgentConfig',
    summary:
      "Set one of a package's config or public values for an agent (validated against the manifest)",
    tag: 'policy',
    status: 204,
    body: body({ value: { type: ['string', 'number', 'boolean'] } }, ['value']),
    handle: async ({ context, params, body: b }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      await setAgentConfig(
        context.mesh,
        agent,
        params['package'] ?? '',
        params['key'] ?? '',
        (b as { value: unknown }).value,
      );
    },
  },
  {
    method: 'DELETE',
    path: '/api/agents/{agent}/packages/{package}/config/{key}',
    operationId: 'resetAgentConfig',
    summary: 'Return a config value to its manifest default',
    tag: 'policy',
    status: 204,
    handle: async ({ context, params }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      await resetAgentConfig(context.mesh, agent, params['package'] ?? '', params['key'] ?? '');
    },
  },
  {
    method: 'PUT',
    path: '/api/agents/{agent}/packages/{package}/secrets/{key}',
    operationId: 'captureAgentSecret',
    summary:
      "Capture the agent's own credential for a package's secret field (write-only: the response is presence and version)",
    tag: 'policy',
    body: body({ value: SECRET_VALUE }, ['value']),
    handle: async ({ context, params, body: b }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const meta = await captureAgentSecret(
        context.mesh,
        agent,
        params['package'] ?? '',
        params['key'] ?? '',
        (b as { value: string }).value,
      );
      return {
        key: params['key'],
        kind: meta.kind,
        present: true,
        version: meta.version,
        created_at: meta.createdAt,
      };
    },
  },
  {
    method: 'DELETE',
    path: '/api/agents/{agent}/packages/{package}/secrets/{key}',
    operationId: 'retireAgentSecret',
    summary: "Revoke the agent's credential for a package's secret field",
    tag: 'policy',
    status: 204,
    handle: async ({ context, params }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      await retireAgentSecret(context.mesh, agent, params['package'] ?? '', params['key'] ?? '');
    },
  },
  {
    method: 'PUT',
    path: '/api/agents/{agent}/packages/{package}/audiences',
    operationId: 'setAgentAudiences',
    summary:
      "Limit a package's tools to some conversation audiences for an agent (null lifts the limit)",
    tag: 'policy',
    status: 204,
    body: body(
      {
        audiences: {
          anyOf: [
            {
              type: 'array',
              items: { enum: ['direct', 'shared'] },
              maxItems: 2,
              uniqueItems: true,
            },
            { type: 'null' },
          ],
        },
      },
      ['audiences'],
    ),
    handle: async ({ context, params, body: b }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const { audiences } = b as { audiences: string[] | null };
      await setAgentAudiences(context.mesh, agent, params['package'] ?? '', audiences ?? undefined);
    },
  },
  {
    method: 'GET',
    path: '/api/agents/{agent}/conversations',
    operationId: 'listConversations',
    summary: "An agent's conversations, most recent first",
    tag: 'conversations',
    query: LIMIT,
    handle: async ({ context, params, query }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const rows = await listConversations(context.mesh, agent.id, limitOf(query));
      return { conversations: rows.map(conversationJson) };
    },
  },
  {
    method: 'POST',
    path: '/api/agents/{agent}/messages',
    operationId: 'sendMessage',
    summary:
      'Send a message to an agent (a new conversation unless one is named) and run its turn; answers with the run and the reply',
    tag: 'conversations',
    body: body(
      {
        body: { type: 'string', minLength: 1, maxLength: 100000 },
        conversation_id: { type: 'string', pattern: `^${UUID_SOURCE}$` },
        audience: { enum: ['direct', 'shared'] },
      },
      ['body'],
    ),
    handle: async ({ context, params, body: b }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const input = b as { body: string; conversation_id?: string; audience?: 'direct' | 'shared' };
      const result = await chat(context.mesh, {
        agentId: agent.id,
        ...(input.conversation_id ? { conversationId: input.conversation_id } : {}),
        ...(input.audience ? { audience: input.audience } : {}),
        actor: actorOf(context.operator),
        body: input.body,
      });
      return {
        run_id: result.runId,
        conversation_id: result.conversationId,
        status: result.status,
        reason: result.reason,
        reply: result.reply,
      };
    },
  },
  {
    method: 'GET',
    path: '/api/conversations/{conversation}/messages',
    operationId: 'listMessages',
    summary: "A conversation's messages, oldest first",
    tag: 'conversations',
    handle: async ({ context, params }) => {
      const id = params['conversation'] ?? '';
      const conversation = isUuid(id) ? await getConversation(context.mesh, id) : undefined;
      if (!conversation)
        throw new MeshError('conversation_not_found', 'no conversation with that id');
      return {
        conversation: conversationJson(conversation),
        messages: (await listMessages(context.mesh, conversation.id)).map(messageJson),
      };
    },
  },
  {
    method: 'GET',
    path: '/api/agents/{agent}/runs',
    operationId: 'listRuns',
    summary: "An agent's runs, newest first",
    tag: 'runs',
    query: LIMIT,
    handle: async ({ context, params, query }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const runs = await listRuns(context.mesh, { agentId: agent.id, limit: limitOf(query) });
      return { runs: runs.map(runSummaryJson) };
    },
  },
  {
    method: 'GET',
    path: '/api/runs/{run}',
    operationId: 'getRun',
    summary:
      'A run and every step: model requests (offered and withheld tools, token estimate), tool calls with commit stamps, observations, the reply',
    tag: 'runs',
    handle: async ({ context, params }) => {
      const run = await runOr404(context.mesh, params['run'] ?? '');
      return runJson(run, await context.mesh.ledger.steps(run.id));
    },
  },
  {
    method: 'GET',
    path: '/api/runs/{run}/artifacts/{artifact}',
    operationId: 'getArtifact',
    summary: 'An observation stored whole as an artifact (its step shows the head and tail)',
    tag: 'runs',
    handle: async ({ context, params }) => {
      const run = await runOr404(context.mesh, params['run'] ?? '');
      const id = params['artifact'] ?? '';
      const artifact = isUuid(id) ? await getArtifact(context.mesh, id) : undefined;
      if (!artifact || artifact.runId !== run.id)
        throw new MeshError('artifact_not_found', 'no artifact with that id in this run');
      return {
        id: artifact.id,
        run_id: artifact.runId,
        step_seq: artifact.stepSeq,
        media_type: artifact.mediaType,
        size_bytes: artifact.sizeBytes,
        sha256: artifact.sha256,
        content: Buffer.from(artifact.content).toString('utf8'),
      };
    },
  },
  {
    method: 'GET',
    path: '/api/providers',
    operationId: 'listProviders',
    summary: 'Model providers, with whether each API key is present (never the key)',
    tag: 'providers',
    handle: async ({ context }) => ({
      providers: (await describeProviders(context.mesh)).map(providerJson),
    }),
  },
  {
    method: 'POST',
    path: '/api/providers',
    operationId: 'addProvider',
    summary:
      'Add a model provider: an OpenAI-compatible endpoint with its API key (stored encrypted), or a script',
    tag: 'providers',
    status: 201,
    body: {
      oneOf: [
        body(
          {
            name: NAME,
            kind: { const: 'openai_compatible' },
            base_url: { type: 'string', minLength: 1, maxLength: 2000 },
            api_key: SECRET_VALUE,
            context_tokens: { type: 'integer', minimum: 1000 },
          },
          ['name', 'kind', 'base_url', 'api_key'],
        ),
        body(
          {
            name: NAME,
            kind: { const: 'scripted' },
            script: { type: 'object' },
            context_tokens: { type: 'integer', minimum: 1000 },
          },
          ['name', 'kind', 'script'],
        ),
      ],
    },
    handle: async ({ context, body: b }) => {
      const input = b as {
        name: string;
        kind: 'openai_compatible' | 'scripted';
        base_url?: string;
        api_key?: string;
        script?: unknown;
        context_tokens?: number;
      };
      const provider: NewProvider =
        input.kind === 'scripted'
          ? { name: input.name, kind: 'scripted', script: input.script }
          : {
              name: input.name,
              kind: 'openai_compatible',
              baseUrl: input.base_url ?? '',
              apiKey: input.api_key ?? '',
            };
      const added = await addModelProvider(context.mesh, {
        ...provider,
        ...(input.context_tokens ? { contextTokens: input.context_tokens } : {}),
      });
      const described = (await describeProviders(context.mesh)).find((p) => p.id === added.id);
      return providerJson(described ?? { ...added, apiKey: null });
    },
  },
  {
    method: 'PUT',
    path: '/api/providers/{provider}/api-key',
    operationId: 'setProviderKey',
    summary: "Rotate a provider's API key (write-only)",
    tag: 'providers',
    body: body({ value: SECRET_VALUE }, ['value']),
    handle: async ({ context, params, body: b }) => {
      const meta = await setProviderKey(
        context.mesh,
        params['provider'] ?? '',
        (b as { value: string }).value,
      );
      return { present: true, version: meta.version, created_at: meta.createdAt };
    },
  },
  {
    method: 'GET',
    path: '/api/packages',
    operationId: 'listPackages',
    summary: 'Installed tool packages and their tools, as their manifests declare them',
    tag: 'packages',
    handle: async ({ context }) => ({ packages: packageViews(context.mesh) }),
  },
  {
    method: 'GET',
    path: '/api/packages/{package}',
    operationId: 'getPackage',
    summary: 'One package as its manifest declares it',
    tag: 'packages',
    handle: async ({ context, params }) =>
      packageView(context.mesh, requirePackage(context.mesh, params['package'] ?? '')),
  },
  ...mcpRoutes,
];
