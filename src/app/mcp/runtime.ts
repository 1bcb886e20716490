import type { OAuthStateStore } from '../../mcp/oauth-state.ts';
import { SessionPool } from '../../mcp/session-pool.ts';
import type { ToolProviderRecord } from '../../store/mcp.ts';
import type { Clock } from '../../tool/clock.ts';
import type { Definition } from '../../tool/definition.ts';

/** How long a listing without a server-given lifetime counts as fresh (see decision 0017). */
export const DEFAULT_CATALOG_FRESH_MS = 60_000;
/** How long a background catalog check may take before it counts as failed. */
export const DEFAULT_CATALOG_CHECK_DEADLINE_MS = 20_000;

/** A remote tool's definition as checked once (remote-definition.ts), or why it is refused. */
export type CheckedDefinition = { definition: Definition } | { refused: string };

/** Tunables of remote MCP's in-memory state; tests shorten them. */
export interface McpRuntimeOptions {
  /** How long a session unused by any call or check is kept before it is ended with `DELETE`. */
  readonly sessionIdleMs?: number;
  /** How often idle sessions are looked for; 0 never (a test calls `closeIdle` itself). */
  readonly sessionSweepEveryMs?: number;
  readonly catalogFreshMs?: number;
  readonly catalogCheckDeadlineMs?: number;
}

/**
 * What one Mesh keeps in memory for remote MCP: fields of the Mesh object, never module state, so
 * two Mesh objects in one process (tests, a CLI beside a server) share nothing.
 */
export interface McpRuntime {
  /** One OAuth state store per binding (`agentId:providerId`): concurrent refreshes share one. */
  readonly oauthStores: Map<string, OAuthStateStore>;
  /**
   * Checked definitions by (provider, tool, fingerprint, semantics): an unchanged remote tool is
   * compiled once, not at every turn.
   */
  readonly definitions: Map<string, CheckedDefinition>;
  /** One MCP session per binding (`agentId:providerId`), shared by its calls and checks. */
  readonly sessions: SessionPool;
  /** The catalog checks running in the background, one per binding at most. */
  readonly checks: Map<string, Promise<void>>;
  /** Bindings whose running check must be followed by one more (a list-changed notice came). */
  readonly checksAgain: Set<string>;
  /**
   * Each binding's tools as this process last read them from its server: tool name to
   * fingerprint, by `agentId:providerId`. A call checks the definition it was offered against it.
   */
  readonly listed: Map<string, ReadonlyMap<string, string>>;
  /**
   * List-changed notices per binding, counted, and the count the last recorded listing had seen:
   * while a binding has notices its catalog has not been read after, its definitions are
   * unconfirmed and called as effects.
   */
  readonly notices: Map<string, number>;
  readonly confirmed: Map<string, number>;
  readonly catalogFreshMs: number;
  readonly catalogCheckDeadlineMs: number;
  /** Aborted when the Mesh closes: background checks stop and record nothing. */
  readonly closing: AbortController;
  /** Resolves when no background check is running (tests await it instead of sleeping). */
  checksSettled(): Promise<void>;
  /**
   * A server said its tool list changed (a list-changed notification on a binding's session): the
   * catalog is marked stale and read again, off any call. What runs is set once, when the Mesh is
   * assembled (`onToolsChanged`), so the sessions need not know the catalog.
   */
  toolsChanged(agentId: string, provider: ToolProviderRecord): void;
  onToolsChanged(listener: (agentId: string, provider: ToolProviderRecord) => void): void;
  /** Stops background checks and ends every session with `DELETE`. */
  close(): Promise<void>;
}

export function createMcpRuntime(clock: Clock, options: McpRuntimeOptions = {}): McpRuntime {
  const checks = new Map<string, Promise<void>>();
  const closing = new AbortController();
  const sessions = new SessionPool({
    clock,
    ...(options.sessionIdleMs === undefined ? {} : { idleMs: options.sessionIdleMs }),
    ...(options.sessionSweepEveryMs === undefined
      ? {}
      : { sweepEveryMs: options.sessionSweepEveryMs }),
  });
  let toolsChangedListener: (agentId: string, provider: ToolProviderRecord) => void = () =>
    undefined;
  const checksSettled = async () => {
    while (checks.size > 0) await Promise.allSettled([...checks.values()]);
  };
  return {
    oauthStores: new Map(),
    definitions: new Map(),
    sessions,
    checks,
    checksAgain: new Set(),
    listed: new Map(),
    notices: new Map(),
    confirmed: new Map(),
    catalogFreshMs: options.catalogFreshMs ?? DEFAULT_CATALOG_FRESH_MS,
    catalogCheckDeadlineMs: options.catalogCheckDeadlineMs ?? DEFAULT_CATALOG_CHECK_DEADLINE_MS,
    closing,
    checksSettled,
    toolsChanged: (agentId, provider) => toolsChangedListener(agentId, provider),
    onToolsChanged(listener) {
      toolsChangedListener = listener;
    },
    async close() {
      closing.abort();
      await checksSettled();
      await sessions.closeAll();
    },
  };
}
