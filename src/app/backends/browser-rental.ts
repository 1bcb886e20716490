import { createHash, randomUUID } from 'node:crypto';
import {
  meshLiveViewPath,
  type BrowserBackend,
  type CdpEndpoint,
  type DrivenSession,
  type SessionRecording,
} from '../../browser/backend.ts';
import { budgetFrom, usageFrom } from '../../run/budget.ts';
import { insertArtifact } from '../../store/artifacts.ts';
import {
  browserGrantOf,
  insertBrowserSession,
  markBrowserSessionEnded,
  markBrowserSessionReady,
  runSessionMs,
  setBrowserSessionHolder,
  setBrowserSessionRecording,
  type BrowserBackendRecord,
  type BrowserSessionRecord,
} from '../../store/browsers.ts';
import type { Db } from '../../store/db.ts';
import { getRun } from '../../store/runs.ts';
import { BrowserUnavailableError } from '../../tool/browser.ts';
import type { ToolContext } from '../../tool/context.ts';
import type { Redactor } from '../../tool/redaction.ts';
import { withoutTypedText } from './browser-recording.ts';
import { postLiveViewNote } from './live-view-note.ts';

/*
 * The steps of renting a run's browser session that hold no state of their own: starting one,
 * reconnecting to one, keeping its recording, and reading its meter (browsers.ts holds the rest).
 */

/** A run's session as this process holds it. */
export interface Held {
  readonly record: BrowserSessionRecord;
  readonly session: DrivenSession;
  readonly backend: BrowserBackend;
}

/** What renting works with. */
export interface RentalDeps {
  readonly db: Db;
  readonly redactor: Redactor;
  /** The backend client for a backend row (one per row and settings). */
  readonly backendOf: (record: BrowserBackendRecord) => Promise<BrowserBackend>;
}

/** Starts a session for the run on the backend the agent was granted, recorded first. */
export async function provision(deps: RentalDeps, ctx: ToolContext, holder: string): Promise<Held> {
  const { db } = deps;
  const granted = await browserGrantOf(db, ctx.agentId);
  if (!granted)
    throw new BrowserUnavailableError(
      'no_backend',
      'no browser backend is granted to this agent; an operator grants one with `mesh browsers grant --agent <agent> --backend <name>`',
    );
  if (granted.backend.kind === 'local' && !granted.backend.development)
    throw new BrowserUnavailableError(
      'development_only',
      `browser backend ${granted.backend.name} is a local (development) backend registered without --dev`,
    );
  const backend = await deps.backendOf(granted.backend);
  const id = randomUUID();
  const record = await insertBrowserSession(db, {
    id,
    runId: ctx.runId,
    agentId: ctx.agentId,
    backendId: granted.backend.id,
    holder,
  });
  if (!record)
    throw new BrowserUnavailableError(
      'backend_down',
      'another process holds this run’s browser session; try again',
    );
  let externalId: string | undefined;
  try {
    const provisioned = await backend.provision({
      sessionId: id,
      runId: ctx.runId,
      agentId: ctx.agentId,
      timeoutMs: 60 * 60_000,
      signal: ctx.signal,
      egress: { allowLoopback: granted.grant.allowLoopback },
    });
    externalId = provisioned.externalId;
    const session = await drive(backend, provisioned.cdp, granted);
    // A local browser has no live view of its own: Mesh serves one (its browser is reachable).
    const liveView =
      provisioned.liveViewUrl ?? (granted.backend.kind === 'local' ? meshLiveViewPath(id) : null);
    const ready = await markBrowserSessionReady(db, id, provisioned.externalId, liveView);
    if (liveView !== null) await postLiveViewNote(db, ctx.runId, id, liveView);
    return { record: ready ?? record, session, backend };
  } catch (error) {
    if (externalId !== undefined) await backend.release(externalId).catch(() => undefined);
    const message = deps.redactor.text(error instanceof Error ? error.message : String(error));
    await markBrowserSessionEnded(db, id, 'failed', message.slice(0, 500));
    throw new BrowserUnavailableError(
      'backend_down',
      `browser backend ${granted.backend.name} could not start a session: ${message}; an operator checks it with \`mesh browsers list\``,
      { cause: error },
    );
  }
}

/**
 * Connects this holder to the run's live session another holder rented (the run moved after a
 * hand-back or a crash): the same browser, on the page it was left at. Undefined when the
 * backend cannot reconnect or the session is gone; the caller rents a new one.
 */
export async function reattach(
  deps: RentalDeps,
  ctx: ToolContext,
  live: BrowserSessionRecord,
  holder: string,
): Promise<Held | undefined> {
  const granted = await browserGrantOf(deps.db, ctx.agentId);
  if (!granted || granted.backend.id !== live.backendId || live.externalId === null) return;
  const backend = await deps.backendOf(granted.backend);
  if (!backend.attach) return;
  try {
    const session = await drive(backend, await backend.attach(live.externalId), granted);
    const record = (await setBrowserSessionHolder(deps.db, live.id, holder)) ?? live;
    return { record, session, backend };
  } catch {
    return undefined;
  }
}

/** Connects to a session over CDP: held to the egress rule when its browser is local. */
async function drive(
  backend: BrowserBackend,
  cdp: CdpEndpoint,
  granted: { backend: BrowserBackendRecord; grant: { allowLoopback: boolean } },
): Promise<DrivenSession> {
  // Only a browser on this machine can reach this machine's network: it is held to the egress
  // rule. A vendor's browser runs outside our perimeter.
  const guard =
    granted.backend.kind === 'local'
      ? (await import('../../browser/egress.ts')).browserEgressGuard({
          allowLoopback: granted.grant.allowLoopback,
        })
      : undefined;
  const { driveOverCdp } = await import('../../browser/backends/cdp-driver.ts');
  // A backend that records nothing gets Mesh's own recording: each action with a screenshot.
  return driveOverCdp(cdp, {
    ...(guard ? { guard } : {}),
    journal: !backend.capabilities.recordings,
  });
}

/**
 * Stores the released session's recording (the vendor's) as an artifact of its run: the proof
 * of what the agent did on the web. A recording the vendor cannot give is not a failed release.
 */
export async function keepRecording(
  deps: RentalDeps,
  backend: BrowserBackend,
  record: BrowserSessionRecord,
): Promise<void> {
  if (!backend.capabilities.recordings || !backend.recording || record.externalId === null) return;
  const recording = await backend.recording(record.externalId).catch(() => undefined);
  if (recording) await storeRecording(deps, record, withoutTypedText(recording));
}

/** Stores a session's recording, redacted of held secrets, as an artifact of its run. */
export async function storeRecording(
  deps: RentalDeps,
  record: BrowserSessionRecord,
  recording: SessionRecording,
): Promise<void> {
  const id = randomUUID();
  const content = Buffer.from(deps.redactor.text(Buffer.from(recording.content).toString('utf8')));
  await insertArtifact(deps.db, {
    id,
    runId: record.runId,
    stepSeq: null,
    mediaType: recording.mediaType,
    content,
    sha256: createHash('sha256').update(content).digest('hex'),
  });
  await setBrowserSessionRecording(deps.db, record.id, id);
}

/**
 * Session time the run may still use and what its usage has not counted yet, in ms, and its
 * budget in minutes.
 */
export async function meter(
  db: Db,
  runId: string,
): Promise<{ leftMs: number; uncountedMs: number; budgetMinutes: number }> {
  const [run, usedMs] = await Promise.all([getRun(db, runId), runSessionMs(db, runId)]);
  if (!run) return { leftMs: 0, uncountedMs: 0, budgetMinutes: 0 };
  const budgetMinutes = budgetFrom(run.budget).maxSessionMinutes;
  const counted = usageFrom(run.usage).sessionMs;
  return {
    leftMs: budgetMinutes * 60_000 - usedMs,
    uncountedMs: Math.max(0, Math.round(usedMs - counted)),
    budgetMinutes,
  };
}
