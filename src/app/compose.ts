import { EgressPools } from '../egress/guarded-fetch.ts';
import { catalog } from '../generated/catalog.ts';
import { loadCatalog, type LoadedCatalog } from '../manifest/verify-catalog.ts';
import { RunLedger } from '../run/ledger.ts';
import { runStore } from '../store/run-store.ts';
import { secretRows } from '../store/secrets.ts';
import { instanceKeyRows } from '../store/instance-key.ts';
import { checkInstanceKey } from '../secrets/instance-key-record.ts';
import {
  connect,
  connectOptionsFromEnv,
  resolveMeshHome,
  type ConnectOptions,
} from '../store/connect.ts';
import { createSecretStore } from '../secrets/secret-store.ts';
import { loadInstanceKey, type InstanceKey } from '../secrets/instance-key.ts';
import { joinTransaction, type Db } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { packageServices } from './service-factories.ts';
import type { Mesh } from './mesh.ts';
import type { ModelClient } from '../model/client.ts';
import type { OpenAiCompatibleOptions } from '../providers/openai-compatible.ts';
import type { RetryPolicy } from '../tool/retry-policy.ts';
import { MeshError } from '../tool/errors.ts';
import { systemClock, type Clock } from '../tool/clock.ts';
import { createMcpRuntime, type McpRuntimeOptions } from './mcp/runtime.ts';
import { createRedactor } from '../tool/redaction.ts';
import {
  createQueryProviderRuntime,
  type QueryProviderRuntimeOptions,
} from './backends/web-service.ts';
import { createWorkspaceRuntime } from './backends/workspaces.ts';
import { createLiveViews } from './backends/browser-live-view.ts';
import { createBrowserRuntime } from './backends/browsers.ts';
import { TurnSlots, turnConcurrency } from './conversations/turn-slots.ts';
import { RunQueue, SETTLE_POLL_MS } from '../run/run-queue.ts';
import { RUN_ENDED_CHANNEL } from '../store/runs.ts';

/*
 * The top of app/: puts a Mesh together (mesh.ts declares what one is). Only entry points (the
 * CLI's serve and its in-process operations, tests, benches) import this file.
 */

/**
 * The composition root. Verifies the compiled-in packages first (a first-party problem fails
 * start-up before the database is touched), then connects, migrates and wires the services.
 */
export async function openMesh(
  options: ConnectOptions & { instanceKeyFile?: string } = meshOptionsFromEnv(),
): Promise<Mesh> {
  const loaded = loadCatalog(catalog);
  const instanceKey = await loadInstanceKey({
    meshHome: options.meshHome ?? resolveMeshHome(),
    ...(options.instanceKeyFile ? { keyFile: options.instanceKeyFile } : {}),
  });
  const db = await connect(options);
  try {
    await migrate(db);
    // Every replica must hold the deployment's key: one with another refuses to start.
    await checkInstanceKey(instanceKeyRows(db), instanceKey);
  } catch (error) {
    await db.close();
    throw error;
  }
  return assembleMesh(db, instanceKey, { catalog: loaded });
}

/**
 * The bootstrap settings: DATABASE_URL, MESH_HOME, and MESH_INSTANCE_KEY_FILE — the path of an
 * operator-provided instance key file (a path, never the key itself).
 */
export function meshOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): ConnectOptions & { instanceKeyFile?: string } {
  return {
    ...connectOptionsFromEnv(env),
    ...(env['MESH_INSTANCE_KEY_FILE'] ? { instanceKeyFile: env['MESH_INSTANCE_KEY_FILE'] } : {}),
  };
}

/** Tunables of an assembled Mesh that are not configuration (tests shorten the retry backoff). */
export interface AssembleOptions {
  readonly catalog?: LoadedCatalog;
  readonly modelRetry?: Partial<RetryPolicy>;
  /** The clock this Mesh reads; the system clock unless a test hands in a manual one. */
  readonly clock?: Clock;
  /** Remote MCP's session idle time and catalog freshness (tests shorten them). */
  readonly mcp?: McpRuntimeOptions;
  /** Query providers' attempts and backoff (tests shorten the backoff). */
  readonly web?: QueryProviderRuntimeOptions;
  /** Turns driven at once; MESH_TURN_CONCURRENCY's value (default 32) unless given. */
  readonly turnConcurrency?: number;
}

/** Wires a Mesh over an open, migrated database (tests pass their own). */

export function assembleMesh(
  db: Db,
  instanceKey: InstanceKey,
  options: AssembleOptions = {},
): Mesh {
  const loaded = options.catalog ?? loadCatalog(catalog);
  const redactor = createRedactor();
  const secrets = createSecretStore(secretRows(db), instanceKey, { redactor });
  const clock = options.clock ?? systemClock;
  const mcp = createMcpRuntime(clock, options.mcp);
  const egress = new EgressPools();
  const workspaces = createWorkspaceRuntime({ db, secrets, redactor });
  const browsers = createBrowserRuntime({ db, secrets, redactor });
  const liveViews = createLiveViews({ db, browsers });
  const web = createQueryProviderRuntime({ db, secrets }, options.web);
  const ledger = new RunLedger(runStore(db), {
    redactor,
    onRunEnded: async (runId, held) => {
      runs.ended(runId);
      await workspaces.releaseRun(runId, 'its run ended', held.workspace);
      await browsers.releaseRun(runId, 'its run ended', held.browser);
    },
    onRunChanged: (runId) => runs.touched(runId),
  });
  const { listen } = db;
  const runs = new RunQueue(
    (runId) => ledger.run(runId),
    SETTLE_POLL_MS,
    listen && ((ended, lost) => listen(RUN_ENDED_CHANNEL, ended, lost)),
  );
  const readsDb = readsOf(db);
  const mesh: Mesh = {
    secrets,
    reads: {
      db: readsDb,
      secrets:
        readsDb === db
          ? secrets
          : createSecretStore(secretRows(readsDb), instanceKey, { redactor }),
    },
    clock,
    db,
    turnSlots: new TurnSlots(options.turnConcurrency ?? turnConcurrency()),
    mcp,
    egress,
    redactor,
    workspaces,
    browsers,
    liveViews,
    catalog: loaded,
    ledger,
    runs,
    services: packageServices(loaded, { db, clock, workspaces, browsers, web, redactor }),
    modelClientFor(provider, onAttempt) {
      if (provider.kind !== 'openai_compatible' || provider.baseUrl === null) {
        throw new MeshError(
          'provider_unsupported',
          `model provider ${provider.name} is not an OpenAI-compatible endpoint`,
        );
      }
      // A client serves one turn: its key is read at the turn's first request and kept for the
      // turn's others (one statement and one unwrap a turn, not one a request). A read that
      // failed is tried again at the next request; a rotation is seen by the next turn.
      let key: Promise<string> | undefined;
      const revealKey = async (): Promise<string> => {
        const revealed = await secrets.reveal({
          ownerType: 'model_provider',
          ownerId: provider.id,
          kind: 'api_key',
        });
        if (revealed === undefined) {
          throw new MeshError(
            'provider_key_missing',
            `model provider ${provider.name} has no API key captured`,
          );
        }
        return revealed;
      };
      return lazyOpenAiClient({
        baseUrl: provider.baseUrl,
        apiKey() {
          key ??= revealKey().catch((error: unknown) => {
            key = undefined;
            throw error;
          });
          return key;
        },
        ...(onAttempt ? { onAttempt } : {}),
        ...(options.modelRetry ? { retry: options.modelRetry } : {}),
      });
    },
    transaction: (fn) =>
      db.transaction((tx) => {
        const joined = joinTransaction(tx, db.kind);
        return fn({
          db: joined,
          secrets: createSecretStore(secretRows(joined), instanceKey, { redactor }),
        });
      }),
    // Sessions are ended (a DELETE each) and background checks stopped before the database
    // they record into goes away.
    close: async () => {
      // Runs in flight are given back (another holder resumes them) while the database is open.
      await runs.close();
      await mcp.close();
      egress.close();
      await workspaces.close();
      await liveViews.close();
      await browsers.close();
      await db.close();
    },
  };
  // Imported when a notice first comes: only a process with an MCP session open gets one.
  mcp.onToolsChanged((agentId, provider) => {
    void import('./mcp/catalog.ts').then((m) => m.catalogChanged(mesh, agentId, provider));
  });
  return mesh;
}

/** The Db whose plain statements go through its reads lane (see Db.reads), or the Db itself. */
function readsOf(db: Db): Db {
  const { reads } = db;
  if (!reads) return db;
  return {
    ...db,
    query: (sql, params) => reads.query(sql, params),
    exec: (sql) => reads.exec(sql),
  };
}

/**
 * An OpenAI-compatible client whose SDK is imported on its first completion: the `openai` package
 * is a few hundred modules, and most processes (every CLI command but chat) never call a model.
 */
function lazyOpenAiClient(options: OpenAiCompatibleOptions): ModelClient {
  let client: Promise<ModelClient> | undefined;
  const lazy: ModelClient = {
    kind: 'openai_compatible',
    async complete(request, callOptions) {
      client ??= import('../providers/openai-compatible.ts').then((m) =>
        m.openAiCompatibleClient(options),
      );
      return (await client).complete(request, callOptions);
    },
  };
  return Object.freeze(lazy);
}

/** Opens Mesh for one piece of work and closes it afterwards, whatever happens. */
export async function withMesh<T>(fn: (mesh: Mesh) => Promise<T>): Promise<T> {
  const mesh = await openMesh();
  try {
    return await fn(mesh);
  } finally {
    await mesh.close();
  }
}
