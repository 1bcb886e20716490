import type { EgressPools } from '../egress/guarded-fetch.ts';
import type { LoadedCatalog } from '../manifest/verify-catalog.ts';
import type { ModelClient } from '../model/client.ts';
import type { AttemptListener } from '../providers/openai-compatible.ts';
import type { RunLedger } from '../run/ledger.ts';
import type { RunQueue } from '../run/run-queue.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { Db } from '../store/db.ts';
import type { ModelProviderRecord } from '../store/model-providers.ts';
import type { Clock } from '../tool/clock.ts';
import type { Services } from '../tool/context.ts';
import type { Redactor } from '../tool/redaction.ts';
import type { BrowserRuntime } from './backends/browsers.ts';
import type { LiveViews } from './backends/browser-live-view.ts';
import type { WorkspaceRuntime } from './backends/workspaces.ts';
import type { TurnSlots } from './conversations/turn-slots.ts';
import type { McpRuntime } from './mcp/runtime.ts';

/*
 * The bottom of app/: what a use case is handed. Every use case, operation and service names this
 * interface; none of them sees how it is put together (compose.ts, at the top of app/, does that).
 */

/** A running Mesh: the database, the verified first-party catalog, and the services handlers get. */
export interface Mesh {
  readonly db: Db;
  /** The turns this process drives at once (MESH_TURN_CONCURRENCY): more wait for a slot. */
  readonly turnSlots: TurnSlots;
  readonly catalog: LoadedCatalog;
  readonly ledger: RunLedger;
  /**
   * The run queue as this process sees it: the worker that drives queued runs here (attached by
   * `mesh serve`, or on the first message sent without one) and the callers waiting for runs.
   */
  readonly runs: RunQueue;
  readonly services: Services;
  readonly secrets: SecretStore;
  /**
   * The same database and secrets for reads that take no locks and are issued together (a turn's
   * configuration): on a server they share one round trip (Db.reads); elsewhere, `db` itself.
   */
  readonly reads: { readonly db: Db; readonly secrets: SecretStore };
  /** Where this Mesh reads the time: freshness, token expiry, retry deadlines. Tests move it. */
  readonly clock: Clock;
  /**
   * Remote MCP's in-memory state, per Mesh: OAuth stores, checked definitions, the pooled
   * sessions and the background catalog checks (ended when the Mesh closes).
   */
  readonly mcp: McpRuntime;
  /**
   * The pooled connections of the guarded fetches this Mesh makes for its remote servers and
   * packages, shared by them per egress policy (decision 0060); ended when the Mesh closes.
   */
  readonly egress: EgressPools;
  /** The execution layer: the runs' workspaces, rented lazily and released when runs end. */
  readonly workspaces: WorkspaceRuntime;
  /** The browser layer: the run's browser session, metered and released with its run. */
  readonly browsers: BrowserRuntime;
  /** Mesh's own Live View of the sessions whose browser this machine reaches (local ones). */
  readonly liveViews: LiveViews;
  /**
   * Every secret this process has captured or revealed, removed from whatever comes back from
   * outside (tool results, model output, provider and server errors, failure reasons, log lines)
   * before it is stored, shown or sent. The ledger applies it to every step it writes.
   */
  readonly redactor: Redactor;
  /**
   * A client for an OpenAI-compatible provider, its key decrypted from secrets at the moment of
   * use. `onAttempt` sees every HTTP attempt; throwing from it refuses the attempt (a run's cap).
   */
  modelClientFor(provider: ModelProviderRecord, onAttempt?: AttemptListener): ModelClient;
  /**
   * Runs `fn` as one unit of work: the rows it writes through `db` and the secrets it captures
   * through `secrets` commit together when it resolves, and none of them when it throws.
   */
  transaction<T>(fn: (unit: { db: Db; secrets: SecretStore }) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
