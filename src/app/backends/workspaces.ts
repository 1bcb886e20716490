import { randomUUID } from 'node:crypto';
import { apiKeyVersion, backendClients, sharedByRun } from './rented.ts';
import { budgetFrom, usageFrom } from '../../run/budget.ts';
import {
  DEFAULT_LIMITS,
  parseEgressRule,
  type EgressRule,
  type Workspace,
  type WorkspaceBackend,
} from '../../exec/backend.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { Db } from '../../store/db.ts';
import { getRun } from '../../store/runs.ts';
import {
  addWorkspaceCompute,
  backendGrantOf,
  getExecutionBackend,
  liveWorkspaceOfRun,
  markWorkspaceEnded,
  markWorkspaceReady,
  insertWorkspace,
  orphanedWorkspaces,
  type ExecutionBackendRecord,
  type WorkspaceRecord,
} from '../../store/workspaces.ts';
import type { ToolContext } from '../../tool/context.ts';
import { hasCode } from '../../tool/errors.ts';
import type { Redactor } from '../../tool/redaction.ts';
import {
  WorkspaceUnavailableError,
  type ExecRequest,
  type ExecResult,
  type Workspaces,
  type WorkspaceSession,
} from '../../tool/workspace.ts';
import { backendFor } from './workspace-backends.ts';

/**
 * The execution layer as the rest of Mesh uses it: hands a call its run's workspace (rented on
 * the run's first workspace call from the backend the agent was granted), meters compute into the
 * workspace row, and releases workspaces when their run ends or dies.
 */
export interface WorkspaceRuntime extends Workspaces {
  /**
   * Ends the run's workspace. `live` false says the database holds none for it (its end said so):
   * only one this process still holds is let go of, without a read.
   */
  releaseRun(runId: string, reason: string, live?: boolean): Promise<void>;
  /** Releases every workspace whose run died (ended, or its holder's lease lapsed). */
  reap(graceMs?: number): Promise<number>;
  /** Releases what this process holds and ends its backends' connections. */
  close(): Promise<void>;
}

interface Held {
  readonly record: WorkspaceRecord;
  readonly workspace: Workspace;
  readonly backend: WorkspaceBackend;
}

/** How long past its lease a run's workspace is kept for a holder that is only slow. */
export const REAP_GRACE_MS = 30_000;

/**
 * Rents a workspace for the run from the backend the agent was granted, recorded first (a row
 * per rental, held by `holder`), then marked ready or failed.
 */
async function provision(
  deps: {
    readonly db: Db;
    readonly redactor: Redactor;
    readonly backendOf: (record: ExecutionBackendRecord) => Promise<WorkspaceBackend>;
  },
  ctx: ToolContext,
  holder: string,
): Promise<Held> {
  const { db, backendOf } = deps;
  const granted = await backendGrantOf(db, ctx.agentId);
  if (!granted) {
    throw new WorkspaceUnavailableError(
      'no_backend',
      'no workspace backend is configured for this agent; an operator grants one with `mesh workspaces grant --agent <agent> --backend <name>`',
    );
  }
  if (granted.backend.kind === 'local' && !granted.backend.development) {
    throw new WorkspaceUnavailableError(
      'development_only',
      `backend ${granted.backend.name} is a local (development) backend registered without --dev; an operator re-adds it with --dev or grants a managed backend`,
    );
  }
  const backend = await backendOf(granted.backend);
  const id = randomUUID();
  const record = await insertWorkspace(db, {
    id,
    runId: ctx.runId,
    agentId: ctx.agentId,
    backendId: granted.backend.id,
    holder,
  });
  if (!record) {
    throw new WorkspaceUnavailableError(
      'backend_down',
      'another process holds this run’s workspace; try again',
    );
  }
  let workspace: Workspace;
  try {
    workspace = await backend.provision({
      workspaceId: id,
      runId: ctx.runId,
      agentId: ctx.agentId,
      egress: granted.grant.egress
        .map((h) => parseEgressRule(h))
        .filter((r): r is EgressRule => r !== undefined),
      credentials: {},
      limits: DEFAULT_LIMITS,
      signal: ctx.signal,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await markWorkspaceEnded(db, id, 'failed', deps.redactor.text(message).slice(0, 500));
    throw new WorkspaceUnavailableError(
      'backend_down',
      `workspace backend ${granted.backend.name} could not provision a workspace: ${deps.redactor.text(message)}; an operator checks the backend with \`mesh workspaces list\``,
      { cause: error },
    );
  }
  await markWorkspaceReady(db, id, workspace.externalId);
  return {
    record: { ...record, state: 'ready', externalId: workspace.externalId },
    workspace,
    backend,
  };
}

/** Compute left in the run's budget, in ms. */
async function computeLeftMs(db: Db, runId: string): Promise<number> {
  const run = await getRun(db, runId);
  if (!run) return 0;
  const budget = budgetFrom(run.budget);
  return budget.maxComputeSeconds * 1000 - usageFrom(run.usage).computeMs;
}

export function createWorkspaceRuntime(deps: {
  db: Db;
  secrets: SecretStore;
  redactor: Redactor;
}): WorkspaceRuntime {
  const { db } = deps;
  /** Workspaces this process rented, by run. */
  const held = new Map<string, Held>();

  /** Backend clients, by backend row, settings and key version (either changed: a new client). */
  const backends = backendClients(
    (record: ExecutionBackendRecord) => backendFor(record, deps.secrets),
    apiKeyVersion(deps.secrets, 'execution_backend'),
  );
  const backendOf = (record: ExecutionBackendRecord) => backends.of(record);
  /** Renting in flight, by run: concurrent first calls share one. */
  const shared = sharedByRun<Held>();
  const rent = (ctx: ToolContext) => shared(ctx.runId, () => acquire(ctx));

  async function end(record: WorkspaceRecord, reason: string): Promise<void> {
    const mine = held.get(record.runId);
    if (mine && mine.record.id === record.id) {
      held.delete(record.runId);
      await mine.workspace.release().catch(() => undefined);
    } else if (record.externalId !== null) {
      const backendRow = await getExecutionBackend(db, record.backendId);
      if (backendRow) {
        const backend = await backendOf(backendRow).catch(() => undefined);
        await backend?.releaseById(record.externalId);
      }
    }
    await markWorkspaceEnded(db, record.id, 'released', reason);
  }

  async function acquire(ctx: ToolContext): Promise<Held> {
    const run = await getRun(db, ctx.runId);
    if (!run) throw new WorkspaceUnavailableError('no_backend', `run ${ctx.runId} does not exist`);
    const holder = run.leaseOwner ?? `process:${process.pid}`;
    const live = await liveWorkspaceOfRun(db, ctx.runId);
    const mine = held.get(ctx.runId);
    if (live && mine && mine.record.id === live.id && live.holder === holder) return mine;
    // A workspace another holder rented (its process died, the run moved) is lost with it: it
    // is released, and this holder rents a new one. A resumed coding run is lossy by design.
    if (live) await end(live, 'superseded: the run moved to another holder');
    if (mine) {
      held.delete(ctx.runId);
      await mine.workspace.release().catch(() => undefined);
    }
    const fresh = await provision({ db, redactor: deps.redactor, backendOf }, ctx, holder);
    held.set(ctx.runId, fresh);
    return fresh;
  }

  function session(ctx: ToolContext, h: Held): WorkspaceSession {
    return {
      root: h.workspace.root,
      async exec(request: ExecRequest): Promise<ExecResult> {
        const left = await computeLeftMs(db, ctx.runId);
        if (left <= 0) {
          await end(h.record, 'the run’s compute budget is spent');
          throw new WorkspaceUnavailableError(
            'compute_exhausted',
            'the run’s compute budget is spent; the workspace was released',
          );
        }
        const result = await h.workspace.exec({
          ...request,
          timeoutMs: Math.max(1, Math.min(request.timeoutMs, left)),
          signal: request.signal ?? ctx.signal,
        });
        await addWorkspaceCompute(db, h.record.id, result.computeMs);
        return result;
      },
      readFile: (path, maxBytes) => h.workspace.readFile(path, maxBytes),
      writeFile: (path, content) => h.workspace.writeFile(path, content),
      grant: (credentials) => h.workspace.grant(credentials),
    };
  }

  return {
    async forCall(ctx: ToolContext): Promise<WorkspaceSession> {
      return session(ctx, await rent(ctx));
    },

    async releaseRun(runId: string, reason: string, known?: boolean): Promise<void> {
      const live = known === false ? undefined : await liveWorkspaceOfRun(db, runId);
      if (live) await end(live, reason);
      else {
        const mine = held.get(runId);
        held.delete(runId);
        await mine?.workspace.release().catch(() => undefined);
      }
    },

    async reap(graceMs = REAP_GRACE_MS): Promise<number> {
      let released = 0;
      for (const orphan of await orphanedWorkspaces(db, graceMs)) {
        try {
          await end(orphan, 'reaped: its run ended or its holder is gone');
          released++;
        } catch (error) {
          // A backend down now is tried again on the next sweep.
          if (!hasCode(error, 'workspace_backend_unavailable')) throw error;
        }
      }
      return released;
    },

    async close(): Promise<void> {
      for (const [runId, h] of held) {
        held.delete(runId);
        await h.workspace.release().catch(() => undefined);
        await markWorkspaceEnded(db, h.record.id, 'released', 'the process holding it stopped');
      }
      await backends.closeAll((backend) => backend.close());
    },
  };
}
