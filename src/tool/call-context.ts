/* A call's context for its handler: the agent's secrets it may ask for, its guarded fetch, its services. */
import type { JsonValue } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import {
  declaredServices,
  servicesDeclared,
  type HttpFetch,
  type Provenance,
  type Services,
  type ToolContext,
  type ToolRuntime,
} from './context.ts';
import type { Definition } from './definition.ts';
import { MeshError } from './errors.ts';

/** A secret a handler asks for: only the kinds its tool needs, from the agent's own slot. */
async function grantedSecret(
  definition: Definition,
  runtime: ToolRuntime,
  kind: string,
): Promise<string> {
  if (!definition.needs.includes(`secret:${kind}`)) {
    throw new MeshError(
      'secret_not_granted',
      `${definition.tool.name} does not declare the need secret:${kind}`,
    );
  }
  const value = await runtime.secretFor?.(definition.origin.packageId, kind);
  if (value === undefined) {
    throw new MeshError('secret_missing', `no ${kind} is captured for this agent`);
  }
  return value;
}

/**
 * The fetch a package's handler is handed: the runtime's guarded one, per its config, made on the
 * first request (most calls send none, and a guarded fetch holds its own connection pools).
 */
function packageFetch(
  runtime: ToolRuntime,
  config: Readonly<Record<string, JsonValue>>,
): HttpFetch {
  let made: HttpFetch | undefined;
  return (url, init) => {
    if (!runtime.fetchFor)
      return Promise.reject(
        new MeshError('egress_unavailable', 'this runtime sends no HTTP requests'),
      );
    made ??= runtime.fetchFor({ allowLoopbackHttp: config['allow_loopback_http'] === true });
    return made(url, init);
  };
}

/** Each runtime's services as each tool may see them: made once per pair, not once per call. */
const serviceViews = new WeakMap<Services, WeakMap<Definition, Services>>();

function servicesFor(runtime: ToolRuntime, definition: Definition): Services {
  let views = serviceViews.get(runtime.services);
  if (!views) serviceViews.set(runtime.services, (views = new WeakMap()));
  let view = views.get(definition);
  if (!view) {
    view = servicesDeclared(runtime.services, declaredServices(definition.needs));
    views.set(definition, view);
  }
  return view;
}

/**
 * What a handler is handed for one call. Its capabilities are methods of one object rather than
 * closures made per call, and the guarded fetch is made on first use (bench:executor).
 */
export class CallContext implements ToolContext {
  readonly agentId: string;
  readonly runId: string;
  readonly callId: string;
  declare readonly step?: number;
  readonly toolName: string;
  readonly provenance: Provenance;
  readonly signal: AbortSignal;
  readonly services: Services;
  readonly config: Readonly<Record<string, JsonValue>>;
  readonly #definition: Definition;
  readonly #runtime: ToolRuntime;
  #fetch: HttpFetch | undefined;

  constructor(definition: Definition, runtime: ToolRuntime, call: ToolCall, step?: number) {
    this.agentId = runtime.agentId;
    this.runId = runtime.runId;
    this.callId = call.id;
    if (step !== undefined) (this as { step?: number }).step = step;
    this.toolName = definition.tool.name;
    this.provenance = runtime.provenance;
    this.signal = runtime.signal;
    this.services = servicesFor(runtime, definition);
    this.config = runtime.configFor(definition.origin.packageId);
    this.#definition = definition;
    this.#runtime = runtime;
    Object.freeze(this);
  }

  secret(kind: string): Promise<string> {
    return grantedSecret(this.#definition, this.#runtime, kind);
  }

  /** A function of its own (handlers hand it to SDKs detached), the same one for the call. */
  get fetch(): HttpFetch {
    return (this.#fetch ??= packageFetch(this.#runtime, this.config));
  }
}
