import type { Mesh } from './mesh.ts';
import type { Audience } from './records.ts';
import { runEffects } from './outbound-view.ts';
import { MeshError } from '../tool/errors.ts';
import { findUnstorable, unstorableMessage } from '../tool/storable-text.ts';

/*
 * The use cases the CLI calls, by name, each taking one plain input object and returning plain
 * data. The CLI calls them through one interface (`UseCaseCall`): in its own process over a Mesh
 * it opened, or — beside a running `mesh serve` — over the server's socket, where the server runs
 * the same function on its own Mesh. So inputs carry names as an operator typed them (the server
 * resolves them), and files named on the command line arrive as their contents.
 *
 * Each entry imports the module it needs when it runs: a CLI process loads only what its one
 * command uses (the MCP client and the turn engine are large).
 */

/** Where the acting operator's identity is not given, it is the process's own user. */
async function operatorOr(given: string | undefined): Promise<string> {
  return given ?? (await import('./operator-call.ts')).currentOperator();
}

async function agentNamed(mesh: Mesh, nameOrId: string) {
  return (await import('./agents.ts')).requireAgent(mesh, nameOrId);
}

/** A binding names an agent and a remote MCP provider. */
interface BindingInput {
  readonly agent: string;
  readonly provider: string;
}

/** Every use case the CLI calls, by name. */
export const useCases = {
  'chat.send': async (
    mesh: Mesh,
    input: { agent: string; conversationId?: string; actor?: string; body: string },
  ) => {
    const agent = await agentNamed(mesh, input.agent);
    return (await import('./turns.ts')).chat(mesh, {
      agentId: agent.id,
      ...(input.conversationId ? { conversationId: input.conversationId } : {}),
      actor: await operatorOr(input.actor),
      body: input.body,
    });
  },

  /**
   * An operation of the catalog, by name: its input is validated there exactly as the HTTP API
   * validates it. The actor is the process's own user unless given.
   */
  'operations.invoke': async (
    mesh: Mesh,
    input: { name: string; input: unknown; actor?: string },
  ): Promise<unknown> => {
    const { operationNamed } = await import('./operations/catalog.ts');
    const op = operationNamed(input.name);
    if (!op) throw new MeshError('route_not_found', `no operation is named ${input.name}`);
    const { invokeOperation } = await import('./operations/operation.ts');
    return invokeOperation(mesh, op, input.input, { actor: await operatorOr(input.actor) });
  },

  /** A run (by its id or a unique prefix of 8 or more characters) and its steps. */
  'runs.show': async (mesh: Mesh, input: { id: string }) => {
    const run = await (await import('./runs/run-ref.ts')).resolveRun(mesh, input.id, 'ID');
    const [steps, effects] = await Promise.all([
      mesh.ledger.steps(run.id),
      runEffects(mesh, run.id),
    ]);
    return { run, steps, effects };
  },

  'tools.setEnabled': async (
    mesh: Mesh,
    input: { agent: string; tool: string; enabled: boolean },
  ) => {
    const agent = await agentNamed(mesh, input.agent);
    await (
      await import('./packages.ts')
    ).setAgentToolEnabled(mesh, agent, input.tool, input.enabled);
    return { agent };
  },

  /** Sets a config value given as text; the manifest's field type decides how it reads. */

  /** The agent's config values by package, defaults filled in (never secrets). */

  /** Captures an agent's credential; returns metadata only, never the value. */

  'mcp.add': async (
    mesh: Mesh,
    input: { slug: string; url: string; allowLoopbackHttp: boolean; timeoutSeconds?: number },
  ) => (await import('./mcp-providers.ts')).addToolProvider(mesh, input),

  'mcp.timeout': async (mesh: Mesh, input: { provider: string; seconds: number }) =>
    (await import('./mcp-providers.ts')).setToolProviderTimeoutSeconds(
      mesh,
      input.provider,
      input.seconds,
    ),

  'mcp.remove': async (mesh: Mesh, input: { provider: string }) =>
    (await import('./mcp-providers.ts')).removeToolProvider(mesh, input.provider),

  'mcp.providers': async (mesh: Mesh, _input: Record<string, never>) =>
    (await import('./queries.ts')).listToolProviders(mesh),

  'mcp.connections': async (mesh: Mesh, input: { agent: string }) => {
    const agent = await agentNamed(mesh, input.agent);
    return {
      agent,
      connections: await (await import('./mcp-connections.ts')).agentConnections(mesh, agent),
    };
  },

  /** Connects with the agent's own bearer token, read by the caller from its file. */
  'mcp.connect': async (mesh: Mesh, input: BindingInput & { token: string }) => {
    const agent = await agentNamed(mesh, input.agent);
    const { check } = await (
      await import('./mcp-connections.ts')
    ).connectAgent(mesh, agent, input.provider, input.token);
    // What cannot be offered is said at once, not first in a chat run's withheld list.
    const { catalogView, withheldTools } = await import('./mcp-catalog.ts');
    const withheld = withheldTools((await catalogView(mesh, agent, input.provider)).tools);
    return { agent, check, withheld };
  },

  /** Starts an OAuth connection; the authorization server redirects back to `origin`. */
  'mcp.oauthStart': async (mesh: Mesh, input: BindingInput & { origin: string }) => {
    const agent = await agentNamed(mesh, input.agent);
    const { authorizationUrl } = await (
      await import('./mcp-connections.ts')
    ).startOAuthConnection(mesh, agent, input.provider, input.origin);
    return { agent, authorizationUrl: authorizationUrl.toString() };
  },

  'mcp.oauthStatus': async (mesh: Mesh, input: BindingInput) => {
    const agent = await agentNamed(mesh, input.agent);
    return (await import('./mcp-connections.ts')).oauthStatus(mesh, agent, input.provider);
  },

  'mcp.review': async (mesh: Mesh, input: BindingInput) => {
    const agent = await agentNamed(mesh, input.agent);
    await (await import('./mcp-catalog.ts')).reviewCatalog(mesh, agent, input.provider);
    return { agent };
  },

  'mcp.exclude': async (mesh: Mesh, input: BindingInput & { tool: string; excluded: boolean }) => {
    const agent = await agentNamed(mesh, input.agent);
    await (
      await import('./mcp-catalog.ts')
    ).excludeTool(mesh, agent, input.provider, input.tool, input.excluded);
    return { agent };
  },

  'mcp.legacyQuery': async (mesh: Mesh, input: BindingInput & { tool: string; on: boolean }) => {
    const agent = await agentNamed(mesh, input.agent);
    await (
      await import('./mcp-catalog.ts')
    ).markLegacyQuery(mesh, agent, input.provider, input.tool, input.on);
    return { agent };
  },

  /** Undefined keeps a scope as it is; null lifts it. */
  'mcp.scope': async (
    mesh: Mesh,
    input: BindingInput & {
      audiences?: readonly Audience[] | null;
      conversationIds?: readonly string[] | null;
    },
  ) => {
    const agent = await agentNamed(mesh, input.agent);
    await (
      await import('./mcp-catalog.ts')
    ).setScopes(mesh, agent, input.provider, {
      ...(input.audiences === undefined ? {} : { audiences: input.audiences }),
      ...(input.conversationIds === undefined ? {} : { conversationIds: input.conversationIds }),
    });
    return { agent };
  },

  'mcp.disconnect': async (mesh: Mesh, input: BindingInput) => {
    const agent = await agentNamed(mesh, input.agent);
    return {
      agent,
      removed: await (
        await import('./mcp-connections.ts')
      ).disconnectAgent(mesh, agent, input.provider),
    };
  },
};

/** The table's type: what a caller (in-process or over the socket) may ask for. */
export type UseCases = typeof useCases;

/** A use case's name. */
export type UseCaseName = keyof UseCases;

/** What a use case takes. */
export type UseCaseInput<N extends UseCaseName> = Parameters<UseCases[N]>[1];

/** What a use case gives back. */
export type UseCaseOutput<N extends UseCaseName> = Awaited<ReturnType<UseCases[N]>>;

/** True when `name` names a use case (a socket request is checked before it is dispatched). */
export function isUseCaseName(name: unknown): name is UseCaseName {
  return typeof name === 'string' && Object.hasOwn(useCases, name);
}

/** Runs one use case on a Mesh. */
export function runUseCase<N extends UseCaseName>(
  mesh: Mesh,
  name: N,
  input: UseCaseInput<N>,
): Promise<UseCaseOutput<N>> {
  const fn = useCases[name] as (mesh: Mesh, input: UseCaseInput<N>) => Promise<UseCaseOutput<N>>;
  // The HTTP face refuses these before a use case runs; the CLI's texts (a persona file, a
  // script) are refused here alike, never by the database's own message.
  const unstorable = findUnstorable(input, '');
  if (unstorable)
    return Promise.reject(
      new MeshError('invalid_text', unstorableMessage(unstorable.field, unstorable.inName), {
        field: unstorable.field,
      }),
    );
  // A failure's message may carry what a server or provider said: a held secret is removed
  // before any face prints it.
  return fn(mesh, input).catch((error: unknown) => {
    if (error instanceof Error) error.message = mesh.redactor.text(error.message);
    throw error;
  });
}
