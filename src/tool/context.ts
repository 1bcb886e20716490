import type { JsonValue } from '../model/json.ts';

declare const serviceBrand: unique symbol;

/**
 * A typed name for a capability the runtime hands to handlers (a memory store, an HTTP client for
 * a registered provider, …). A package declares the key and the interface it needs; the
 * composition root supplies the implementation. The core knows neither.
 */
export interface ServiceKey<T> {
  readonly id: string;
  readonly [serviceBrand]?: T;
}

/** Declares a service key. */
export function serviceKey<T>(id: string): ServiceKey<T> {
  return Object.freeze({ id });
}

/** The services a runtime offers. `get` throws when the service is not wired: that is a bug. */
export interface Services {
  get<T>(key: ServiceKey<T>): T;
  has(key: ServiceKey<unknown>): boolean;
}

/** Builds a services lookup from a list of key/implementation pairs. */
export function services(
  entries: ReadonlyArray<readonly [ServiceKey<unknown>, unknown]>,
): Services {
  const byId = new Map<string, unknown>();
  for (const [key, impl] of entries) byId.set(key.id, impl);
  return Object.freeze({
    get<T>(key: ServiceKey<T>): T {
      if (!byId.has(key.id)) throw new Error(`service ${key.id} is not available in this runtime`);
      return byId.get(key.id) as T;
    },
    has(key: ServiceKey<unknown>): boolean {
      return byId.has(key.id);
    },
  });
}

/**
 * How the runtime makes one service: the key a package's tools name in their `needs`
 * (`service:<key id>`), and a factory over what the host offers. Factories run on first use, so
 * a process that never calls a memory verb never builds the memory store.
 */
export interface ServiceFactory<T, Host> {
  readonly key: ServiceKey<T>;
  create(host: Host): T;
}

/** A services lookup over factories, each built once, on its first `get`. */
export function lazyServices<Host>(
  factories: ReadonlyArray<ServiceFactory<unknown, Host>>,
  host: Host,
): Services {
  const byId = new Map<string, ServiceFactory<unknown, Host>>();
  for (const factory of factories) {
    if (byId.has(factory.key.id)) throw new Error(`service ${factory.key.id} is provided twice`);
    byId.set(factory.key.id, factory);
  }
  const built = new Map<string, unknown>();
  return Object.freeze({
    get<T>(key: ServiceKey<T>): T {
      if (!built.has(key.id)) {
        const factory = byId.get(key.id);
        if (!factory) throw new Error(`service ${key.id} is not available in this runtime`);
        built.set(key.id, factory.create(host));
      }
      return built.get(key.id) as T;
    },
    has(key: ServiceKey<unknown>): boolean {
      return byId.has(key.id);
    },
  });
}

/** The service ids a definition declares in its `needs` (`service:<id>`). */
export function declaredServices(needs: readonly string[]): ReadonlySet<string> {
  return new Set(
    needs.filter((n) => n.startsWith('service:')).map((n) => n.slice('service:'.length)),
  );
}

/**
 * The runtime's services as one tool may see them: only those its `needs` declare. A handler
 * that reaches for an undeclared service is a packaging bug, refused loudly, the way an
 * undeclared secret kind is; the manifest stays the whole answer to "what could this reach".
 */
export function servicesDeclared(all: Services, declared: ReadonlySet<string>): Services {
  return Object.freeze({
    get<T>(key: ServiceKey<T>): T {
      if (!declared.has(key.id))
        throw new Error(`service ${key.id} is not declared in this tool's needs`);
      return all.get(key);
    },
    has(key: ServiceKey<unknown>): boolean {
      return declared.has(key.id) && all.has(key);
    },
  });
}

/** Where a call's authority and attribution come from: always persisted records, never arguments. */
export type Provenance =
  | { readonly kind: 'inbound_message'; readonly messageId: string; readonly actor: string }
  | { readonly kind: 'operator'; readonly operator: string };

/** What the caller of the executor knows about the run a call belongs to. */
/** An HTTP request as `fetch` makes it. */
export type HttpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export interface ToolRuntime {
  readonly agentId: string;
  readonly runId: string;
  readonly provenance: Provenance;
  readonly signal: AbortSignal;
  readonly services: Services;
  /** The agent's config values for one package (config and public dispositions; never secrets). */
  configFor(packageId: string): Readonly<Record<string, JsonValue>>;
  /**
   * Decrypts the agent's own credential of a kind for one package, at the moment of use; undefined
   * when none is captured. Absent in runtimes that hold no secrets (tests, benchmarks).
   */
  secretFor?(packageId: string, kind: string): Promise<string | undefined>;
  /**
   * The control plane's guarded fetch (address checked on every hop, DNS pinned, redirects
   * bounded), with loopback allowed only when asked for. Absent in runtimes that send no HTTP.
   */
  fetchFor?(options: { readonly allowLoopbackHttp: boolean }): HttpFetch;
}

/** What a handler is handed for one call. */
export interface ToolContext {
  readonly agentId: string;
  readonly runId: string;
  readonly callId: string;
  /** The call's step number in its run, when the call was recorded in one (keys its effects). */
  readonly step?: number;
  readonly toolName: string;
  readonly provenance: Provenance;
  readonly signal: AbortSignal;
  readonly services: Services;
  /** This package's config values for this agent. */
  readonly config: Readonly<Record<string, JsonValue>>;
  /**
   * The agent's own credential of `kind` for this package. Only kinds the tool declares as a
   * `secret:<kind>` need are granted; anything else is refused. Hand the value to the vendor
   * call that needs it and nowhere else: never return it, log it or put it in an error.
   */
  secret(kind: string): Promise<string>;
  /**
   * How a handler reaches its vendor: the control plane's guarded fetch, never the global one.
   * Loopback and plain http are reachable only when this package's config sets
   * `allow_loopback_http` (development); private, link-local and metadata addresses never are.
   */
  fetch: HttpFetch;
}
