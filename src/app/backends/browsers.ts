import { createHash, randomUUID } from 'node:crypto';
import { backendClients, sharedByRun } from './rented.ts';
import {
  meshLiveViewPath,
  type BrowserBackend,
  type CdpEndpoint,
  type DrivenSession,
  type SessionRecording,
} from '../../browser/backend.ts';
import { budgetFrom, formatSeconds, usageFrom } from '../../run/budget.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import {
  browserGrantOf,
  getBrowserBackend,
  insertBrowserSession,
  liveBrowserSessionOfRun,
  markBrowserSessionEnded,
  markBrowserSessionReady,
  orphanedBrowserSessions,
  runSessionMs,
  setBrowserSessionHolder,
  setBrowserSessionRecording,
  type BrowserBackendRecord,
  type BrowserSessionRecord,
} from '../../store/browsers.ts';
import type { Db } from '../../store/db.ts';
import { insertArtifact } from '../../store/artifacts.ts';
import { getRun } from '../../store/runs.ts';
import {
  BrowserUnavailableError,
  type Browsers,
  type MeteredBrowserPage,
} from '../../tool/browser.ts';
import type { ToolContext } from '../../tool/context.ts';
import { hasCode } from '../../tool/errors.ts';
import type { Redactor } from '../../tool/redaction.ts';
import { browserBackendFor } from './browser-backends.ts';
import { withoutTypedText } from './browser-recording.ts';
import { postLiveViewNote } from './live-view-note.ts';

/**
 * The browser layer as the rest of Mesh uses it: hands a call its run's browser session (rented
 * on the run's first browser call from the backend the agent was granted, driven over CDP),
 * meters the session's time against the run's budget, and releases sessions when their run ends
 * or dies.
 */
export interface BrowserRuntime extends Browsers {
  /** Releases the run's live session, if any (its run ended). */
  releaseRun(runId: string, reason: string): Promise<void>;
  /** Releases every session whose run died (ended, or its holder's lease lapsed). */
  reap(graceMs?: number): Promise<number>;
  /** Releases what this process holds and ends its backends' connections. */
  close(): Promise<void>;
  /**
   * Where Mesh's own Live View connects to a live session (a local one, whose browser this
   * machine reaches); undefined when the session is not live or its backend cannot reconnect.
   */
  liveViewEndpoint(session: BrowserSessionRecord): Promise<CdpEndpoint | undefined>;
}

interface Held {
  readonly record: BrowserSessionRecord;
  readonly session: DrivenSession;
  readonly backend: BrowserBackend;
}

/** How long past its lease a run's session is kept for a holder that is only slow. */
export const BROWSER_REAP_GRACE_MS = 30_000;

export function createBrowserRuntime(deps: {
  db: Db;
  secrets: SecretStore;
  redactor: Redactor;
}): BrowserRuntime {
  const { db } = deps;
  const held = new Map<string, Held>();

  /** Backend clients, by backend row (and its settings: a changed row is a new client). */
  const backends = backendClients((record: BrowserBackendRecord) =>
    browserBackendFor(record, deps.secrets),
  );
  const backendOf = (record: BrowserBackendRecord) => backends.of(record);
  /** Renting in flight, by run: concurrent first calls share one. */
  const shared = sharedByRun<Held>();
  const rent = (ctx: ToolContext) => shared(ctx.runId, () => acquire(ctx));

  async function end(record: BrowserSessionRecord, reason: string): Promise<void> {
    const mine = held.get(record.runId);
    let backend: BrowserBackend | undefined;
    let journal: SessionRecording | undefined;
    if (mine && mine.record.id === record.id) {
      held.delete(record.runId);
      journal = mine.session.journal();
      await mine.session.disconnect();
      backend = mine.backend;
    } else if (record.externalId !== null) {
      const row = await getBrowserBackend(db, record.backendId);
      backend = row && (await backendOf(row).catch(() => undefined));
    }
    if (backend && record.externalId !== null) await backend.release(record.externalId);
    await markBrowserSessionEnded(db, record.id, 'released', reason);
    if (journal) await storeRecording(record, journal);
    else if (backend && record.externalId !== null) await keepRecording(backend, record);
  }

  /**
   * Stores the released session's recording (the vendor's) as an artifact of its run: the proof
   * of what the agent did on the web. A recording the vendor cannot give is not a failed release.
   */
  async function keepRecording(backend: BrowserBackend, record: BrowserSessionRecord) {
    if (!backend.capabilities.recordings || !backend.recording || record.externalId === null)
      return;
    const recording = await backend.recording(record.externalId).catch(() => undefined);
    if (recording) await storeRecording(record, withoutTypedText(recording));
  }

  async function storeRecording(record: BrowserSessionRecord, recording: SessionRecording) {
    const id = randomUUID();
    const content = Buffer.from(
      deps.redactor.text(Buffer.from(recording.content).toString('utf8')),
    );
    await insertArtifact(db, {
      id,
      runId: record.runId,
      stepSeq: null,
      mediaType: recording.mediaType,
      content,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
    await setBrowserSessionRecording(db, record.id, id);
  }

  async function provision(ctx: ToolContext, holder: string): Promise<Held> {
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
    const backend = await backendOf(granted.backend);
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
   * Connects this holder to the run's live session another holder rented (the run moved after a
   * hand-back or a crash): the same browser, on the page it was left at. Undefined when the
   * backend cannot reconnect or the session is gone; the caller rents a new one.
   */
  async function reattach(
    ctx: ToolContext,
    live: BrowserSessionRecord,
    holder: string,
  ): Promise<Held | undefined> {
    const granted = await browserGrantOf(db, ctx.agentId);
    if (!granted || granted.backend.id !== live.backendId || live.externalId === null) return;
    const backend = await backendOf(granted.backend);
    if (!backend.attach) return;
    try {
      const session = await drive(backend, await backend.attach(live.externalId), granted);
      const record = (await setBrowserSessionHolder(db, live.id, holder)) ?? live;
      return { record, session, backend };
    } catch {
      return undefined;
    }
  }

  async function acquire(ctx: ToolContext): Promise<Held> {
    const run = await getRun(db, ctx.runId);
    if (!run) throw new BrowserUnavailableError('no_backend', `run ${ctx.runId} does not exist`);
    const holder = run.leaseOwner ?? `process:${process.pid}`;
    const live = await liveBrowserSessionOfRun(db, ctx.runId);
    const mine = held.get(ctx.runId);
    if (live && mine && mine.record.id === live.id) {
      if (live.holder === holder) return mine;
      // This process still drives the session; the run's new lease holds it from now on.
      const record = (await setBrowserSessionHolder(db, live.id, holder)) ?? mine.record;
      const kept = { ...mine, record };
      held.set(ctx.runId, kept);
      return kept;
    }
    if (live && live.state === 'ready') {
      if (mine) {
        held.delete(ctx.runId);
        await mine.session.disconnect();
      }
      const attached = await reattach(ctx, live, holder);
      if (attached) {
        held.set(ctx.runId, attached);
        return attached;
      }
    }
    // A session no one can reconnect to (its backend cannot, or its browser is gone) is
    // released, and this holder rents a new one: the page it was on is lost with it.
    if (live) await end(live, 'superseded: the run moved to another holder');
    if (mine) {
      held.delete(ctx.runId);
      await mine.session.disconnect();
    }
    const fresh = await provision(ctx, holder);
    held.set(ctx.runId, fresh);
    return fresh;
  }

  /**
   * Session time the run may still use and what its usage has not counted yet, in ms, and its
   * budget in minutes.
   */
  async function meter(
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

  /** Ends the run's session because its time is spent, refusing the call that found it so. */
  async function exhausted(runId: string, budgetMinutes: number): Promise<never> {
    const live = await liveBrowserSessionOfRun(db, runId);
    if (live) await end(live, 'the run’s browser session time is spent');
    throw new BrowserUnavailableError(
      'session_time_exhausted',
      `browser session time (${formatSeconds(budgetMinutes * 60)}) spent; the session was released`,
      { meteredMs: (await meter(runId)).uncountedMs },
    );
  }

  /** The session's page for one call (each call is one action, checked against the meter). */
  function page(ctx: ToolContext, h: Held): MeteredBrowserPage {
    return {
      navigate: (url) => h.session.navigate(url),
      read: (mode) => h.session.read(mode),
      act: (action) => h.session.act(action),
      screenshot: (fullPage) => h.session.screenshot(fullPage),
      meter: async () => (await meter(ctx.runId)).uncountedMs,
    };
  }

  return {
    async forCall(ctx) {
      // Checked before each call's one action: a spent budget ends the session, not the call.
      const { leftMs, budgetMinutes } = await meter(ctx.runId);
      if (leftMs <= 0) await exhausted(ctx.runId, budgetMinutes);
      return page(ctx, await rent(ctx));
    },

    async handoff({ runId }) {
      const live = await liveBrowserSessionOfRun(db, runId);
      if (!live || live.state !== 'ready')
        throw new BrowserUnavailableError(
          'no_session',
          'the run has no browser session open: open the page a person should act on (browser_navigate), then hand it over',
        );
      if (live.liveViewUrl === null) {
        const row = await getBrowserBackend(db, live.backendId);
        throw new BrowserUnavailableError(
          'no_live_view',
          `browser backend ${row?.name ?? live.backendId} offers no live view, so no one could take the session over`,
        );
      }
      return { sessionId: live.id, link: live.liveViewUrl };
    },

    async liveViewEndpoint(session) {
      if (!['ready', 'awaiting_human'].includes(session.state) || session.externalId === null)
        return undefined;
      const row = await getBrowserBackend(db, session.backendId);
      if (!row || row.kind !== 'local') return undefined;
      const backend = await backendOf(row);
      return backend.attach?.(session.externalId).catch(() => undefined);
    },

    async releaseRun(runId, reason) {
      const live = await liveBrowserSessionOfRun(db, runId);
      if (live) await end(live, reason);
      else {
        const mine = held.get(runId);
        held.delete(runId);
        await mine?.session.disconnect();
      }
    },

    async reap(graceMs = BROWSER_REAP_GRACE_MS) {
      let released = 0;
      for (const orphan of await orphanedBrowserSessions(db, graceMs)) {
        try {
          await end(orphan, 'reaped: its run ended or its holder is gone');
          released++;
        } catch (error) {
          if (!hasCode(error, 'browser_backend_unavailable')) throw error;
        }
      }
      return released;
    },

    async close() {
      for (const [runId, h] of held) {
        held.delete(runId);
        await h.session.disconnect();
        if (h.record.externalId !== null)
          await h.backend.release(h.record.externalId).catch(() => undefined);
        await markBrowserSessionEnded(
          db,
          h.record.id,
          'released',
          'the process holding it stopped',
        );
      }
      await backends.closeAll((backend) => backend.close());
    },
  };
}
