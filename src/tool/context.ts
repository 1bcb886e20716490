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

/** Where a call's authority and attribution come from: always persisted records, never arguments. */
export type Provenance =
  | { readonly kind: 'inbound_message'; readonly messageId: string; readonly actor: string }
  | { readonly kind: 'operator'; readonly operator: string };

/** What the caller of the executor knows about the run a call belongs to. */
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
}

/** What a handler is handed for one call. */
export interface ToolContext {
  readonly agentId: string;
  readonly runId: string;
  readonly callId: string;
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
}
